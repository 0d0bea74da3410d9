#include "fake_storage/engine/file_store.h"
#include "fake_storage/engine/file_ranges.h"
#include "fake_storage/engine/blob_rows.h"
#include "fake_storage/engine/share_paths.h"
#include "fake_storage/engine/share_rows.h"
#include "fake_storage/engine/share_snapshot_names.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <mutex>

#include "common/crypto/random_id.h"
#include "common/text/ascii.h"
#include "fake_storage/engine/names.h"
#include "fake_storage/engine/storage_error.h"

namespace bai::storage {
namespace fs = std::filesystem;
using namespace share_rows;
using std::int64_t;

OpenFile::~OpenFile() {
    if (fd >= 0) ::close(fd);
}

FileStore::FileStore(db::Database& db, ContentFiles& files) : db_(db), files_(files) {}

fs::path FileStore::share_root(const std::string& account, const std::string& share) const {
    // A snapshot's files are outside its share's directory: neither a mount of the share nor a
    // job writing into it reaches them.
    if (is_share_snapshot_key(share)) {
        auto [base, snapshot] = split_share_snapshot_key(share);
        return files_.root() / account / "share-snapshots" / base / snapshot;
    }
    // A soft-deleted share's files are out of the shares' directory too (share_soft_delete.cpp).
    if (!split_deleted_share_key(share).second.empty()) return files_.root() / account / "deleted-shares" / share;
    return files_.root() / account / "shares" / share;
}

fs::path FileStore::disk_path(const std::string& account, const std::string& share,
                              const std::string& stored_path) const {
    return stored_path.empty() ? share_root(account, share) : share_root(account, share) / stored_path;
}

int FileStore::open_regular(const std::string& account, const std::string& share, const std::string& stored_path,
                            int flags) const {
    return open_regular_in_share(share_root(account, share), stored_path, flags).release();
}

std::shared_mutex& FileStore::lock_for(const std::string& account, const std::string& share,
                                       const std::string& path) {
    std::string key = text::lower(account + '\n' + share + '\n' + path);
    return file_locks_[std::hash<std::string>{}(key) % file_locks_.size()];
}

ShareInfo FileStore::create_share(const std::string& account, const std::string& name,
                                  std::optional<std::int64_t> quota_gib, const Metadata& metadata,
                                  const std::optional<std::string>& access_tier) {
    ShareInfo s{name, new_etag(), time::now(), metadata, quota_gib.value_or(5120)};
    s.created = s.access_tier_changed = s.last_modified;
    s.access_tier = access_tier.value_or("");
    if (s.quota_gib < 1 || s.quota_gib > 102400) {
        fail(400, "InvalidHeaderValue",
             "The value for one of the HTTP headers is not in the correct format.\n"
             "HeaderName:x-ms-share-quota\nHeaderValue:" + std::to_string(s.quota_gib));
    }
    db_.transaction([&](db::Database& db) {
        if (find_share(db, account, name)) {
            fail(409, "ShareAlreadyExists", "The specified share already exists.");
        }
        fs::create_directories(share_root(account, name));
        db.prepare(
              "INSERT INTO shares(account, name, etag, created, last_modified, metadata, quota, access_tier)"
              " VALUES (?1, ?2, ?3, ?4, ?4, ?5, ?6, ?7)")
            .bind(1, account)
            .bind(2, name)
            .bind(3, s.etag)
            .bind(4, time::to_ticks(s.last_modified))
            .bind(5, metadata_to_json(metadata))
            .bind(6, s.quota_gib)
            .bind(7, s.access_tier)
            .run();
    });
    return s;
}

ShareInfo FileStore::get_share(const std::string& account, const std::string& name) {
    std::optional<ShareInfo> s;
    db_.read([&](db::Database& db) { s = find_share(db, account, name); });
    if (!s) share_not_found();
    return *s;
}

void FileStore::drop_share(db::Database& db, const std::string& account, const std::string& key,
                           std::vector<fs::path>& trash) {
    for (const char* sql : {"DELETE FROM share_entries WHERE account = ?1 AND share = ?2",
                            "DELETE FROM pending_ranges WHERE account = ?1 AND share = ?2",
                            "DELETE FROM share_permissions WHERE account = ?1 AND share = ?2",
                            "DELETE FROM shares WHERE account = ?1 AND name = ?2"}) {
        db.prepare(sql).bind(1, account).bind(2, key).run();
    }
    trash.push_back(files_.root() / "tmp" / ("share-" + crypto::random_hex(8)));
    std::error_code ec;
    fs::rename(share_root(account, key), trash.back(), ec);
}

void FileStore::delete_share(const std::string& account, const std::string& name,
                             const std::optional<std::string>& lease_id, bool with_snapshots, bool keep_deleted) {
    if (keep_deleted && !is_share_snapshot_key(name)) {
        soft_delete_share(account, name, lease_id, with_snapshots);
        changes_.publish(account, name, "");  // the whole share: its mounts show it gone
        return;
    }
    std::vector<fs::path> trash;
    db_.transaction([&](db::Database& db) {
        const time::TimePoint now = time::now();
        auto s = find_share(db, account, name);
        if (!s && is_share_snapshot_key(name)) {
            require_share(db, account, split_share_snapshot_key(name).first);
            fail(404, "ShareSnapshotNotFound", "The specified share snapshot does not exist.");
        }
        if (!s) share_not_found();
        std::vector<std::string> keys;
        if (!is_share_snapshot_key(name)) {
            // The share's snapshots: "NAME/..." sorts below "NAME0" ('0' follows '/').
            auto q = db.prepare("SELECT name, lease FROM shares WHERE account = ?1 AND name > ?2 AND name < ?3");
            q.bind(1, account).bind(2, name + "/").bind(3, name + "0");
            bool leased = false;
            while (q.step()) {
                keys.push_back(q.column_text(0));
                leased = leased || lease_from_json(q.column_text(1)).locked(now);
            }
            if (!keys.empty() && !with_snapshots) {
                fail(409, "ShareHasSnapshots", "The share has snapshots and the operation requires no snapshots.");
            }
            if (leased) {
                fail(409, "DeleteShareWhenSnapshotLeased",
                     "Unable to delete share because one or more share snapshots have active leases.");
            }
        }
        check_lease_for_write(s->lease, lease_id, now, LeaseTarget::container);
        keys.push_back(name);
        for (const std::string& key : keys) drop_share(db, account, key, trash);
    });
    std::error_code ec;
    for (const fs::path& dir : trash) fs::remove_all(dir, ec);
    if (!is_share_snapshot_key(name)) {
        fs::remove(files_.root() / account / "share-snapshots" / name, ec);  // if empty
        changes_.publish(account, name, "");  // the whole share: its mounts show it gone
    }
}

ShareInfo FileStore::update_share(const std::string& account, const std::string& name,
                                  const std::function<void(ShareInfo&)>& change) {
    ShareInfo result;
    db_.transaction([&](db::Database& db) {
        auto s = find_share(db, account, name);
        if (!s) share_not_found();
        change(*s);
        s->etag = new_etag();
        s->last_modified = time::now();
        db.prepare("UPDATE shares SET metadata = ?3, quota = ?4, etag = ?5, last_modified = ?6, access_tier = ?7,"
                   " access_tier_changed = ?8, signed_identifiers = ?9 WHERE account = ?1 AND name = ?2")
            .bind(1, account)
            .bind(2, name)
            .bind(3, metadata_to_json(s->metadata))
            .bind(4, s->quota_gib)
            .bind(5, s->etag)
            .bind(6, time::to_ticks(s->last_modified))
            .bind(7, s->access_tier)
            .bind(8, time::to_ticks(s->access_tier_changed))
            .bind(9, signed_identifiers_to_json(s->identifiers))
            .run();
        result = *s;
    });
    return result;
}

ShareInfo FileStore::set_share_metadata(const std::string& account, const std::string& name,
                                        const Metadata& metadata, const std::optional<std::string>& lease_id) {
    return update_share(account, name, [&](ShareInfo& s) {
        check_lease_if_named(s.lease, lease_id, time::now(), LeaseTarget::container);
        s.metadata = metadata;
    });
}

ShareInfo FileStore::set_share_quota(const std::string& account, const std::string& name,
                                     std::int64_t quota_gib, const std::optional<std::string>& lease_id) {
    return update_share(account, name, [&](ShareInfo& s) {
        check_lease_if_named(s.lease, lease_id, time::now(), LeaseTarget::container);
        s.quota_gib = quota_gib;
    });
}

ShareInfo FileStore::set_share_properties(const std::string& account, const std::string& name,
                                          std::optional<std::int64_t> quota_gib,
                                          const std::optional<std::string>& access_tier,
                                          const std::optional<std::string>& lease_id) {
    return update_share(account, name, [&](ShareInfo& s) {
        const time::TimePoint now = time::now();
        check_lease_if_named(s.lease, lease_id, now, LeaseTarget::container);
        if (quota_gib) s.quota_gib = *quota_gib;
        if (access_tier) {
            s.access_tier = *access_tier;
            s.access_tier_changed = now;
        }
    });
}

ShareInfo FileStore::set_share_acl(const std::string& account, const std::string& name,
                                   const std::vector<SignedIdentifier>& identifiers,
                                   const std::optional<std::string>& lease_id) {
    return update_share(account, name, [&](ShareInfo& s) {
        check_lease_if_named(s.lease, lease_id, time::now(), LeaseTarget::container);
        s.identifiers = identifiers;
    });
}

std::pair<LeaseOutcome, ShareInfo> FileStore::lease_share(const std::string& account, const std::string& name,
                                                          const LeaseRequest& request) {
    std::pair<LeaseOutcome, ShareInfo> out;
    const std::string new_id = crypto::uuid4();
    db_.transaction([&](db::Database& db) {
        auto s = find_share(db, account, name);
        if (!s) share_not_found();
        out.first = apply_lease(s->lease, request, time::now(), new_id);
        s->lease = out.first.lease;
        db.prepare("UPDATE shares SET lease = ?3 WHERE account = ?1 AND name = ?2")
            .bind(1, account)
            .bind(2, name)
            .bind(3, lease_to_json(s->lease))
            .run();
        out.second = *s;
    });
    return out;
}

SharePage FileStore::list_shares(const std::string& account, const ListOptions& o, bool deleted) {
    // Listed by share, each share's snapshots (oldest first) before it, as the service lists them:
    // the order of "SHARE\x01TIME", the share itself "SHARE\x01\x7f"; a deleted share of the name
    // before them all, "SHARE\x01\x01VERSION". A marker names the share (or the snapshot's or
    // deleted share's key) to start at, as the service writes it ("/ACCOUNT/SHARE"), or bare.
    auto order = [](const std::string& key) {
        auto [base, version] = split_deleted_share_key(key);
        if (!version.empty()) return base + "\x01\x01" + version;
        const std::string snapshot = split_share_snapshot_key(key).second;
        return base + '\x01' + (snapshot.empty() ? std::string("\x7f") : snapshot);
    };
    std::string marker = o.marker;
    if (marker.starts_with('/')) {
        const size_t slash = marker.find('/', 1);
        marker = slash == std::string::npos ? std::string() : marker.substr(slash + 1);
    }
    const std::string from = marker.empty() ? std::string() : order(marker);
    auto key_of = [](const ShareInfo& s) {
        if (!s.deleted_version.empty()) return deleted_share_key(s.name, s.deleted_version);
        return s.snapshot.empty() ? s.name : share_snapshot_key(s.name, s.snapshot);
    };
    std::vector<ShareInfo> shares;
    db_.read([&](db::Database& db) {
        auto q = db.prepare(std::string("SELECT ") + kShareColumns +
                            " FROM shares WHERE account = ?1 AND name >= ?2 AND name < ?3 ORDER BY name");
        const std::string start = std::max(split_deleted_share_key(marker).first, o.prefix);
        q.bind(1, account).bind(2, start).bind(3, o.prefix + "\xFF");
        while (q.step()) {
            ShareInfo s = read_share(q);
            if (!s.deleted_version.empty() && (!deleted || !s.snapshot.empty())) continue;  // a deleted share's snapshots are not listed
            if (!s.snapshot.empty() && !o.snapshots) continue;
            if (!from.empty() && order(key_of(s)) < from) continue;
            shares.push_back(std::move(s));
        }
    });
    std::stable_sort(shares.begin(), shares.end(),
                     [&](const ShareInfo& a, const ShareInfo& b) { return order(key_of(a)) < order(key_of(b)); });
    SharePage page;
    for (ShareInfo& s : shares) {
        if (static_cast<int>(page.shares.size()) == o.max_results) {
            page.next_marker = "/" + account + "/" + key_of(s);
            break;
        }
        page.shares.push_back(std::move(s));
    }
    return page;
}

std::uint64_t FileStore::share_usage(const std::string& account, const std::string& name) {
    std::uint64_t bytes = 0;
    db_.read([&](db::Database& db) {
        require_share(db, account, name);
        auto q = db.prepare("SELECT coalesce(sum(size), 0) FROM share_entries WHERE account = ?1 AND share = ?2");
        q.bind(1, account).bind(2, name);
        q.step();
        bytes = static_cast<std::uint64_t>(q.column_int(0));
    });
    return bytes;
}

ShareEntry FileStore::create_directory(const std::string& account, const std::string& share,
                                       const std::string& path, const Metadata& metadata,
                                       const SmbUpdate& smb) {
    SplitPath p = split(path);
    sync_from_disk(account, share, p.parent);
    if (p.path.empty()) fail(409, "ResourceAlreadyExists", "The specified resource already exists.");
    ShareEntry e;
    db_.transaction([&](db::Database& db) {
        require_share(db, account, share);
        std::string parent = require_parent(db, account, share, p);
        if (find_entry(db, account, share, p.path)) {
            fail(409, "ResourceAlreadyExists", "The specified resource already exists.");
        }
        time::TimePoint now = time::now();
        e.path = parent.empty() ? p.name : parent + "/" + p.name;
        e.name = p.name;
        e.is_dir = true;
        e.etag = new_etag();
        e.last_modified = now;
        e.smb = apply_smb({now, now, now, "Directory"}, smb);
        e.permission_key = smb.permission_key.value_or("");
        e.metadata = metadata;
        ShareParent where = parent_in_share(share_root(account, share), e.path);
        if (!where.dir || (::mkdirat(where.dir.get(), where.name.c_str(), 0755) != 0 && errno != EEXIST)) {
            disk_failure("cannot create", disk_path(account, share, e.path), true);
        }
        struct stat st {};  // an existing name must be a directory (not a link, fifo or file left there)
        if (::fstatat(where.dir.get(), where.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode)) {
            fail(409, "ResourceAlreadyExists", "The specified resource already exists.");
        }
        insert_entry(db, account, share, parent, e);
    });
    changes_.publish(account, share, e.path);
    return e;
}

ShareEntry FileStore::get_directory(const std::string& account, const std::string& share,
                                    const std::string& path) {
    sync_from_disk(account, share, path);
    SplitPath p = split(path);
    ShareEntry e;
    db_.read([&](db::Database& db) {
        if (p.path.empty()) {
            auto s = find_share(db, account, share);
            if (!s) share_not_found();
            e.is_dir = true;
            e.etag = s->etag;
            e.last_modified = s->last_modified;
            e.smb = {s->last_modified, s->last_modified, s->last_modified, "Directory"};
            return;
        }
        e = require_entry(db, account, share, p);
        if (!e.is_dir) resource_not_found();
    });
    return e;
}

void FileStore::delete_directory(const std::string& account, const std::string& share,
                                 const std::string& path) {
    sync_from_disk(account, share, path, /*listing=*/true);  // what a job left in it keeps it
    SplitPath p = split(path);
    if (p.path.empty()) fail(400, "InvalidResourceName", "The share root cannot be deleted.");
    std::string deleted;
    db_.transaction([&](db::Database& db) {
        ShareEntry e = require_entry(db, account, share, p);
        if (!e.is_dir) resource_not_found();
        deleted = e.path;
        auto children = db.prepare(
            "SELECT 1 FROM share_entries WHERE account = ?1 AND share = ?2 AND parent = ?3 LIMIT 1");
        children.bind(1, account).bind(2, share).bind(3, e.path);
        if (children.step()) fail(409, "DirectoryNotEmpty", "The specified directory is not empty.");
        db.prepare("DELETE FROM share_entries WHERE id = ?1").bind(1, e.id).run();
        remove_in_share(share_root(account, share), e.path, AT_REMOVEDIR);
    });
    changes_.publish(account, share, deleted);
}

ShareEntry FileStore::update_entry(const std::string& account, const std::string& share,
                                   const std::string& path, bool want_dir,
                                   const std::function<void(ShareEntry&)>& change) {
    sync_from_disk(account, share, path);
    SplitPath p = split(path);
    ShareEntry e;
    db_.transaction([&](db::Database& db) {
        e = require_entry(db, account, share, p);
        if (e.is_dir != want_dir) resource_not_found();
        change(e);
        touch(e);
        save_entry(db, e);
    });
    return e;
}

ShareEntry FileStore::set_directory_metadata(const std::string& account, const std::string& share,
                                             const std::string& path, const Metadata& metadata) {
    return update_entry(account, share, path, true, [&](ShareEntry& e) { e.metadata = metadata; });
}

ShareEntry FileStore::set_directory_properties(const std::string& account, const std::string& share,
                                               const std::string& path, const SmbUpdate& smb) {
    return update_entry(account, share, path, true,
                        [&](ShareEntry& e) {
                            e.smb = apply_smb(e.smb, smb);
                            if (smb.permission_key) e.permission_key = *smb.permission_key;
                        });
}

DirectoryPage FileStore::list_directory(const std::string& account, const std::string& share,
                                        const std::string& path, const ListOptions& o) {
    // Once per listing, at its first page: a continuation lists what its first page adopted.
    if (o.marker.empty()) sync_from_disk(account, share, path, /*listing=*/true);
    DirectoryPage page;
    page.directory = get_directory(account, share, path);
    const DirectFiles direct = direct_files_now();
    db_.read([&](db::Database& db) {
        auto q = db.prepare(std::string("SELECT ") + kEntryColumns +
                            " FROM share_entries WHERE account = ?1 AND share = ?2 AND parent = ?3"
                            " AND name >= ?4 COLLATE NOCASE AND name < ?5 COLLATE NOCASE"
                            " ORDER BY name COLLATE NOCASE LIMIT ?6");
        q.bind(1, account)
            .bind(2, share)
            .bind(3, page.directory.path)
            .bind(4, std::max(o.marker, o.prefix))
            .bind(5, o.prefix + "\xFF")
            .bind(6, o.max_results + 1);
        while (q.step()) {
            ShareEntry e = read_entry(q);
            if (static_cast<int>(page.entries.size()) == o.max_results) {
                page.next_marker = e.name;
                break;
            }
            page.entries.push_back(std::move(e));
        }
    });
    if (!direct.empty()) {
        for (ShareEntry& e : page.entries) {
            if (!e.is_dir && caught_up_direct_writes(account, share, e, direct)) e = get_file_row(account, share, e.path);
        }
    }
    return page;
}

ShareEntry FileStore::create_file(const std::string& account, const std::string& share,
                                  const std::string& path, std::uint64_t size,
                                  const ContentSettings& content, const Metadata& metadata,
                                  const SmbUpdate& smb, bool create_new_only,
                                  const std::optional<std::string>& lease_id) {
    SplitPath p = split(path);
    sync_from_disk(account, share, p.parent);
    sync_from_disk(account, share, p.path);  // a file a job made there is replaced as REST's would be
    if (p.path.empty()) fail(400, "InvalidResourceName", "A file needs a name.");
    if (size > kMaxFileSize) {
        fail(400, "InvalidHeaderValue",
             "The value for one of the HTTP headers is not in the correct format.\n"
             "HeaderName:x-ms-content-length\nHeaderValue:" + std::to_string(size));
    }
    ShareEntry e;
    db_.transaction([&](db::Database& db) {
        require_share(db, account, share);
        std::string parent = require_parent(db, account, share, p);
        auto existing = find_entry(db, account, share, p.path);
        if (existing && existing->is_dir) {
            fail(409, "ResourceAlreadyExists", "The specified resource already exists.");
        }
        if (existing && create_new_only) {
            fail(403, "AuthorizationPermissionMismatch",
                 "This request is not authorized to perform this operation using this permission.");
        }
        if (existing) check_lease_for_write(existing->lease, lease_id, time::now(), LeaseTarget::file);
        time::TimePoint now = time::now();
        e.path = existing ? existing->path : (parent.empty() ? p.name : parent + "/" + p.name);
        e.name = existing ? existing->name : p.name;
        e.size = size;
        e.etag = new_etag();
        e.last_modified = now;
        e.smb = apply_smb({now, now, now, "Archive"}, smb);
        e.content = content;
        e.metadata = metadata;
        e.permission_key = smb.permission_key.value_or("");
        // Nothing written; what the file held before (a file made anew) changed to nothing.
        FileRanges ranges;
        if (existing && existing->size > 0) ranges.clear(0, existing->size, next_file_change());
        e.ranges = ranges.to_text();
        fs::path on_disk = disk_path(account, share, e.path);
        std::unique_lock lock(lock_for(account, share, e.path));
        // A new inode, made in tmp/ (same file system, swept at start) and renamed into place:
        // readers that opened the old file keep its bytes, and a crash leaves nothing in the share.
        fs::path fresh = files_.root() / "tmp" / crypto::random_hex(16);
        int fd = ::open(fresh.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0) io_failure("cannot create", on_disk);
        int rc = ::ftruncate(fd, static_cast<off_t>(size));
        ::close(fd);
        ShareParent where = parent_in_share(share_root(account, share), e.path);
        if (rc != 0 || !where.dir || ::renameat(AT_FDCWD, fresh.c_str(), where.dir.get(), where.name.c_str()) != 0) {
            const int error = errno;
            ::unlink(fresh.c_str());
            errno = error;
            disk_failure("cannot create", on_disk, true);
        }
        if (existing) {
            e.id = existing->id;
            e.lease = existing->lease;  // a replaced file keeps its lease (save_entry leaves it)
            save_entry(db, e);
            db.prepare("UPDATE share_entries SET copy = '' WHERE id = ?1").bind(1, e.id).run();  // no copy made it
        } else {
            insert_entry(db, account, share, parent, e);
        }
    });
    changes_.publish(account, share, e.path);
    return e;
}

ShareEntry FileStore::get_file_row(const std::string& account, const std::string& share, const std::string& path) {
    SplitPath p = split(path);
    ShareEntry e;
    db_.read([&](db::Database& db) {
        e = require_entry(db, account, share, p);
        if (e.is_dir) resource_not_found();
    });
    return e;
}

ShareEntry FileStore::get_file(const std::string& account, const std::string& share,
                               const std::string& path) {
    sync_from_disk(account, share, path);
    const DirectFiles direct = direct_files_now();
    ShareEntry e = get_file_row(account, share, path);
    return caught_up_direct_writes(account, share, e, direct) ? get_file_row(account, share, path) : e;
}

OpenFile FileStore::open_file(const std::string& account, const std::string& share,
                              const std::string& path) {
    OpenFile f;
    f.info = get_file(account, share, path);
    std::shared_lock lock(lock_for(account, share, f.info.path));
    f.fd = open_regular(account, share, f.info.path, O_RDONLY);
    if (f.fd < 0) disk_failure("cannot open", disk_path(account, share, f.info.path));
    return f;
}

bool FileStore::apply_range(const std::string& account, const std::string& share,
                            const std::string& stored_path, std::uint64_t offset,
                            const std::string& content_id, const std::string& inline_data,
                            std::int64_t pending_id) {
    bool applied = false;
    {
        std::unique_lock lock(lock_for(account, share, stored_path));
        fs::path on_disk = disk_path(account, share, stored_path);
        int target = open_regular(account, share, stored_path, O_WRONLY);
        applied = target >= 0;
        int source = content_id.empty() ? -1 : files_.open(account, ContentKind::block, content_id);
        auto write_at = [&](const char* data, size_t n, std::uint64_t at) {
            if (::pwrite(target, data, n, static_cast<off_t>(at)) != static_cast<ssize_t>(n)) {
                ::close(target);
                if (source >= 0) ::close(source);
                io_failure("cannot write", on_disk);
            }
        };
        if (target >= 0 && content_id.empty()) {
            write_at(inline_data.data(), inline_data.size(), offset);
        } else if (target >= 0 && source >= 0) {
            std::vector<char> buffer(1 << 20);
            off_t in = 0;
            ssize_t n = 0;
            while ((n = ::pread(source, buffer.data(), buffer.size(), in)) > 0) {
                write_at(buffer.data(), static_cast<size_t>(n), offset + static_cast<std::uint64_t>(in));
                in += n;
            }
        }
        if (source >= 0) ::close(source);
        if (target >= 0) ::close(target);
    }
    db_.transaction([&](db::Database& db) {
        db.prepare("DELETE FROM pending_ranges WHERE id = ?1").bind(1, pending_id).run();
    });
    if (!content_id.empty()) files_.remove(account, ContentKind::block, content_id);
    return applied;
}

ShareEntry FileStore::put_range(const std::string& account, const std::string& share,
                                const std::string& path, std::uint64_t offset, ContentWriter& data,
                                const std::optional<std::string>& lease_id) {
    sync_from_disk(account, share, path);
    if (data.size() > kMaxRangeSize) {
        fail(413, "RequestBodyTooLarge",
             "The request body is too large and exceeds the maximum permissible limit.");
    }
    SplitPath p = split(path);
    const bool small = data.in_memory();
    std::string content_id = small ? "" : files_.commit(data, account, ContentKind::block);
    ShareEntry e;
    int64_t pending_id = 0;
    try {
        db_.transaction([&](db::Database& db) {
            e = require_entry(db, account, share, p);
            if (e.is_dir) resource_not_found();
            check_lease_for_write(e.lease, lease_id, time::now(), LeaseTarget::file);
            check_range_in_file(offset, data.size(), e.size);
            if (auto ranges = FileRanges::from_text(e.ranges)) {
                ranges->write(offset, offset + data.size(), next_file_change());
                e.ranges = ranges->to_text();
            }
            auto journal = db.prepare(
                "INSERT INTO pending_ranges(account, share, path, offset, content_id, data)"
                " VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
            journal.bind(1, account)
                .bind(2, share)
                .bind(3, e.path)
                .bind(4, static_cast<int64_t>(offset))
                .bind(5, content_id)
                .bind_null(6);
            if (small) journal.bind_blob(6, data.bytes());
            journal.run();
            pending_id = sqlite3_last_insert_rowid(db.handle());
            touch(e);
            e.smb.last_write_time = e.last_modified;
            e.smb.change_time = e.last_modified;
            save_entry(db, e);
        });
    } catch (...) {
        if (!small) files_.remove(account, ContentKind::block, content_id);
        throw;
    }
    const bool applied = apply_range(account, share, e.path, offset, content_id,
                                     small ? data.bytes() : std::string(), pending_id);
    changes_.publish(account, share, e.path);
    if (!applied) resource_not_found();  // its file is gone from the disk, or a link took its place
    return e;
}

ShareEntry FileStore::clear_range(const std::string& account, const std::string& share,
                                  const std::string& path, std::uint64_t offset,
                                  std::uint64_t length, const std::optional<std::string>& lease_id) {
    sync_from_disk(account, share, path);
    SplitPath p = split(path);
    ShareEntry e;
    db_.transaction([&](db::Database& db) {
        e = require_entry(db, account, share, p);
        if (e.is_dir) resource_not_found();
        check_lease_for_write(e.lease, lease_id, time::now(), LeaseTarget::file);
        check_range_in_file(offset, length, e.size);
        std::unique_lock lock(lock_for(account, share, e.path));
        int fd = open_regular(account, share, e.path, O_WRONLY);
        if (fd < 0) disk_failure("cannot open", disk_path(account, share, e.path));
        if (::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(offset),
                        static_cast<off_t>(length)) != 0) {
            std::vector<char> zeros(std::min<std::uint64_t>(length, 1 << 20), 0);
            for (std::uint64_t done = 0; done < length;) {
                size_t n = static_cast<size_t>(std::min<std::uint64_t>(zeros.size(), length - done));
                if (::pwrite(fd, zeros.data(), n, static_cast<off_t>(offset + done)) < 0) break;
                done += n;
            }
        }
        ::close(fd);
        if (auto ranges = FileRanges::from_text(e.ranges)) {
            ranges->clear(offset, offset + length, next_file_change());
            e.ranges = ranges->to_text();
        }
        touch(e);
        save_entry(db, e);
    });
    changes_.publish(account, share, e.path);
    return e;
}

ShareEntry FileStore::set_file_properties(const std::string& account, const std::string& share,
                                          const std::string& path, std::optional<std::uint64_t> size,
                                          const std::optional<ContentSettings>& content,
                                          const SmbUpdate& smb, const std::optional<std::string>& lease_id) {
    ShareEntry changed = update_entry(account, share, path, false, [&](ShareEntry& e) {
        check_lease_for_write(e.lease, lease_id, time::now(), LeaseTarget::file);
        if (size) {
            if (*size > kMaxFileSize) {
                fail(400, "InvalidHeaderValue",
                     "The value for one of the HTTP headers is not in the correct format.\n"
                     "HeaderName:x-ms-content-length\nHeaderValue:" + std::to_string(*size));
            }
            std::unique_lock lock(lock_for(account, share, e.path));
            ShareFd fd(open_regular(account, share, e.path, O_WRONLY));
            if (!fd || ::ftruncate(fd.get(), static_cast<off_t>(*size)) != 0) {
                disk_failure("cannot resize", disk_path(account, share, e.path));
            }
            e.size = *size;
            if (auto ranges = FileRanges::from_text(e.ranges)) {
                ranges->truncate(*size);
                e.ranges = ranges->to_text();
            }
        }
        if (content) e.content = *content;
        e.smb = apply_smb(e.smb, smb);
        if (smb.permission_key) e.permission_key = *smb.permission_key;
    });
    changes_.publish(account, share, changed.path);
    return changed;
}

ShareEntry FileStore::set_file_metadata(const std::string& account, const std::string& share,
                                        const std::string& path, const Metadata& metadata,
                                        const std::optional<std::string>& lease_id) {
    return update_entry(account, share, path, false, [&](ShareEntry& e) {
        check_lease_for_write(e.lease, lease_id, time::now(), LeaseTarget::file);
        e.metadata = metadata;
    });
}

void FileStore::delete_file(const std::string& account, const std::string& share,
                            const std::string& path, const std::optional<std::string>& lease_id) {
    sync_from_disk(account, share, path);
    SplitPath p = split(path);
    std::string deleted;
    db_.transaction([&](db::Database& db) {
        ShareEntry e = require_entry(db, account, share, p);
        if (e.is_dir) resource_not_found();
        check_lease_for_write(e.lease, lease_id, time::now(), LeaseTarget::file);
        db.prepare("DELETE FROM share_entries WHERE id = ?1").bind(1, e.id).run();
        std::unique_lock lock(lock_for(account, share, e.path));
        remove_in_share(share_root(account, share), e.path, 0);
        deleted = e.path;
    });
    changes_.publish(account, share, deleted);
}

std::pair<LeaseOutcome, ShareEntry> FileStore::lease_file(const std::string& account, const std::string& share,
                                                          const std::string& path, const LeaseRequest& request) {
    if (request.action == LeaseAction::renew) {  // a file's lease never expires: nothing to renew
        fail(400, "InvalidHeaderValue",
             "The value for one of the HTTP headers is not in the correct format.\nHeaderName:x-ms-lease-action\nHeaderValue:renew");
    }
    if (request.action == LeaseAction::acquire && request.duration && *request.duration != -1) {
        fail(400, "InvalidHeaderValue",
             "The value for one of the HTTP headers is not in the correct format.\nHeaderName:x-ms-lease-duration"
             "\nHeaderValue:" + std::to_string(*request.duration));
    }
    LeaseRequest r = request;
    if (r.action == LeaseAction::break_) r.break_period = 0;  // Lease File has no break period
    sync_from_disk(account, share, path);
    SplitPath p = split(path);
    const std::string new_id = crypto::uuid4();
    std::pair<LeaseOutcome, ShareEntry> out;
    db_.transaction([&](db::Database& db) {
        ShareEntry e = require_entry(db, account, share, p);
        if (e.is_dir) resource_not_found();
        out.first = apply_lease(e.lease, r, time::now(), new_id);
        e.lease = out.first.lease;
        db.prepare("UPDATE share_entries SET lease = ?2 WHERE id = ?1").bind(1, e.id).bind(2, lease_to_json(e.lease)).run();
        out.second = std::move(e);
    });
    return out;
}

bool FileStore::file_leased(const std::string& account, const std::string& share, const std::string& path) {
    bool leased = false;
    db_.read([&](db::Database& db) {
        auto e = find_entry(db, account, share, path);
        leased = e && !e->is_dir && e->lease.locked(time::now());
    });
    return leased;
}

std::vector<FileRanges::Listed> FileStore::list_ranges(const std::string& account, const std::string& share,
                                                      const std::string& path, std::uint64_t first,
                                                      std::uint64_t last, const std::string& previous) {
    OpenFile f = open_file(account, share, path);
    if (f.info.size == 0) return {};
    last = std::min(last, f.info.size - 1);
    if (first > last) return {};
    const std::optional<FileRanges> ranges = FileRanges::from_text(f.info.ranges);
    if (ranges && previous.empty()) return ranges->list(first, last);
    if (ranges) {
        // What changed after the last change the snapshot's copy of the file saw (none: all of it).
        std::int64_t since = 0;
        db_.read([&](db::Database& db) {
            if (auto before = find_entry(db, account, previous, f.info.path)) {
                if (auto seen = FileRanges::from_text(before->ranges)) since = seen->last_change();
            }
        });
        return ranges->changed_since(since, first, last);
    }
    // Written through a mount: the file's data on disk, whole blocks (its holes are the rest).
    std::vector<FileRanges::Listed> out;
    std::shared_lock lock(lock_for(account, share, f.info.path));
    off_t at = static_cast<off_t>(first);
    while (at <= static_cast<off_t>(last)) {
        off_t data = ::lseek(f.fd, at, SEEK_DATA);
        if (data < 0 || data > static_cast<off_t>(last)) break;
        off_t hole = ::lseek(f.fd, data, SEEK_HOLE);
        if (hole < 0) hole = static_cast<off_t>(f.info.size);
        std::uint64_t end = std::min<std::uint64_t>(static_cast<std::uint64_t>(hole) - 1, last);
        out.push_back({static_cast<std::uint64_t>(data), end, false});
        at = hole;
    }
    return out;
}

size_t FileStore::recover() {
    remove_snapshot_leftovers();
    struct Pending {
        int64_t id;
        std::string account, share, path, content_id;
        std::uint64_t offset;
        std::string data;
    };
    std::vector<Pending> pending;
    db_.read([&](db::Database& db) {
        auto q = db.prepare(
            "SELECT id, account, share, path, offset, content_id, data FROM pending_ranges ORDER BY id");
        while (q.step()) {
            pending.push_back({q.column_int(0), q.column_text(1), q.column_text(2), q.column_text(3),
                               q.column_text(5), static_cast<std::uint64_t>(q.column_int(4)),
                               q.column_text(6)});
        }
    });
    for (const Pending& p : pending) {
        apply_range(p.account, p.share, p.path, p.offset, p.content_id, p.data, p.id);
    }
    return pending.size();
}

std::vector<std::string> FileStore::live_content_ids() {
    std::vector<std::string> ids;
    db_.read([&](db::Database& db) {
        auto q = db.prepare("SELECT content_id FROM pending_ranges WHERE content_id <> ''");
        while (q.step()) ids.push_back(q.column_text(0));
    });
    return ids;
}

}  // namespace bai::storage
