// FileStore::adopt_disk_changes: the index follows what other writers left in a share's directory.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <memory>
#include <optional>

#include "common/text/ascii.h"
#include "common/time/timestamps.h"
#include "fake_storage/engine/file_store.h"
#include "fake_storage/engine/names.h"
#include "fake_storage/engine/properties.h"
#include "fake_storage/engine/share_paths.h"
#include "fake_storage/engine/storage_error.h"

namespace bai::storage {
namespace fs = std::filesystem;
namespace {

struct Indexed {
    std::int64_t id;
    std::string name;
    bool is_dir;
    std::uint64_t size;
    std::int64_t last_modified;
};

// The entries directly under `parent`, by lower-cased name (names are case-insensitive).
std::map<std::string, Indexed> indexed_children(db::Database& db, const std::string& account, const std::string& share,
                                                const std::string& parent) {
    auto q = db.prepare(
        "SELECT id, name, is_dir, size, last_modified FROM share_entries WHERE account = ?1 AND share = ?2 AND parent = ?3");
    q.bind(1, account).bind(2, share).bind(3, parent);
    std::map<std::string, Indexed> out;
    while (q.step()) {
        Indexed e{q.column_int(0), q.column_text(1), q.column_int(2) != 0, static_cast<std::uint64_t>(q.column_int(3)),
                  q.column_int(4)};
        out.emplace(text::lower(e.name), e);
    }
    return out;
}

// The entry `name` directly under `parent` (case-insensitive), through the parent index.
std::optional<Indexed> indexed_child_of(db::Database& db, const std::string& account, const std::string& share,
                                        const std::string& parent, const std::string& name) {
    auto q = db.prepare(
        "SELECT id, name, is_dir, size, last_modified FROM share_entries"
        " WHERE account = ?1 AND share = ?2 AND parent = ?3 AND name = ?4 COLLATE NOCASE");
    q.bind(1, account).bind(2, share).bind(3, parent).bind(4, name);
    if (!q.step()) return std::nullopt;
    return Indexed{q.column_int(0), q.column_text(1), q.column_int(2) != 0, static_cast<std::uint64_t>(q.column_int(3)),
                   q.column_int(4)};
}

// The store stamps Last-Modified just before it writes a file, so the file's mtime can be a little
// later than the index's time without anyone else having touched it. A same-size rewrite by
// another writer within this second is missed (a size change never is).
constexpr std::int64_t kStoreWriteSlack = 10'000'000;  // 1 s in 100 ns ticks

std::int64_t mtime_ticks(const struct stat& st) {
    return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 10'000'000 + st.st_mtim.tv_nsec / 100;
}

void insert(db::Database& db, const std::string& account, const std::string& share, const std::string& parent,
            const std::string& name, const struct stat& st) {
    const bool dir = S_ISDIR(st.st_mode);
    const std::int64_t ticks = mtime_ticks(st);
    db.prepare(
          "INSERT INTO share_entries(account, share, path, parent, name, is_dir, size, etag, last_modified,"
          " creation_time, last_write_time, change_time, attributes) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9, ?9,"
          " ?9, ?10)")
        .bind(1, account)
        .bind(2, share)
        .bind(3, parent.empty() ? name : parent + "/" + name)
        .bind(4, parent)
        .bind(5, name)
        .bind(6, static_cast<std::int64_t>(dir))
        .bind(7, dir ? std::int64_t{0} : static_cast<std::int64_t>(st.st_size))
        .bind(8, new_etag())
        .bind(9, ticks)
        .bind(10, std::string(dir ? "Directory" : "Archive"))
        .run();
}

void remove_subtree(db::Database& db, const std::string& account, const std::string& share, const std::string& path) {
    db.prepare(
          "DELETE FROM share_entries WHERE account = ?1 AND share = ?2 AND (path = ?3 OR substr(path, 1, length(?3) + 1) = ?3 || '/')")
        .bind(1, account)
        .bind(2, share)
        .bind(3, path)
        .run();
}

class Adopter {
public:
    Adopter(db::Database& db, std::string account, std::string share, fs::path root)
        : db_(db), account_(std::move(account)), share_(std::move(share)), root_(std::move(root)) {}

    // Indexes the directories on the way to `parts` (they must exist on disk); returns false
    // when one does not.
    bool ancestors(const std::vector<std::string>& parts, size_t count, std::string& stored) {
        for (size_t i = 0; i < count; ++i) {
            std::optional<Indexed> known = indexed_child_of(db_, account_, share_, stored, parts[i]);
            std::string next = stored.empty() ? parts[i] : stored + "/" + parts[i];
            struct stat st {};
            if (known) {
                if (!known->is_dir) return false;
                next = stored.empty() ? known->name : stored + "/" + known->name;
            } else {
                if (!stat_in_share(root_, next, st) || !S_ISDIR(st.st_mode)) return false;
                insert(db_, account_, share_, stored, parts[i], st);
                ++changed_;
            }
            stored = next;
        }
        return true;
    }

    // Syncs the entries of `dir`, and of every directory under it when `recursive`.
    void walk(const std::string& dir, bool recursive = true) {
        // Opened without following links: an indexed directory that a link has replaced on disk is
        // not walked into (its parent's walk removes it from the index).
        // Its entries are looked at through that descriptor (one fstatat each, not a walk from the
        // share's root per entry).
        ShareFd fd = open_in_share(root_, dir, O_RDONLY | O_DIRECTORY);
        std::unique_ptr<DIR, int (*)(DIR*)> listing(fd ? ::fdopendir(fd.get()) : nullptr, ::closedir);
        if (!listing) return;  // unreadable: leave its entries as they are
        fd.release();
        std::vector<std::string> names;
        errno = 0;
        while (const dirent* entry = ::readdir(listing.get())) {
            const std::string name = entry->d_name;
            if (name != "." && name != "..") names.push_back(name);
        }
        if (errno != 0) return;
        auto indexed = indexed_children(db_, account_, share_, dir);
        for (const std::string& name : names) {
            std::optional<Indexed> known;
            if (auto found = indexed.find(text::lower(name)); found != indexed.end()) {
                known = found->second;
                indexed.erase(found);
            }
            if (sync_child(dir, name, known, false, ::dirfd(listing.get())) && recursive) {
                walk(dir.empty() ? name : dir + "/" + name);
            }
        }
        for (const auto& [lower, gone] : indexed) {
            remove_subtree(db_, account_, share_, dir.empty() ? gone.name : dir + "/" + gone.name);
            ++changed_;
        }
    }

    // Brings the entry `name` of `dir` in line with the disk (`known`: its row, if any; `written`:
    // its content changed even if its size and time say otherwise). Returns true when it is a
    // directory on disk whose contents a caller may want to walk. `dir_fd`: `dir` already opened
    // without links (a walk's), else it is reached from the share's root.
    bool sync_child(const std::string& dir, const std::string& name, const std::optional<Indexed>& known, bool written,
                    int dir_fd = -1) {
        const std::string path = dir.empty() ? name : dir + "/" + name;
        struct stat st {};
        const bool found = dir_fd >= 0 ? ::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0
                                       : stat_in_share(root_, path, st);
        const bool on_disk = found && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode));
        if (!on_disk) {  // gone, or links and fifos: not share content
            if (known) {
                remove_subtree(db_, account_, share_, dir.empty() ? known->name : dir + "/" + known->name);
                ++changed_;
            }
            return false;
        }
        if (!known) {
            insert(db_, account_, share_, dir, name, st);
            ++changed_;
            return S_ISDIR(st.st_mode);
        }
        if (known->name != name) return false;  // a second name differing only in case: not representable
        if (known->is_dir != S_ISDIR(st.st_mode)) {
            remove_subtree(db_, account_, share_, path);
            insert(db_, account_, share_, dir, name, st);
            ++changed_;
        } else if (!known->is_dir && (written || known->size != static_cast<std::uint64_t>(st.st_size) ||
                                      mtime_ticks(st) > known->last_modified + kStoreWriteSlack)) {
            db_.prepare(
                  "UPDATE share_entries SET size = ?2, etag = ?3, last_modified = ?4, last_write_time = ?4,"
                  " change_time = ?4, ranges = '' WHERE id = ?1")
                .bind(1, known->id)
                .bind(2, static_cast<std::int64_t>(st.st_size))
                .bind(3, new_etag())
                .bind(4, std::max(mtime_ticks(st), known->last_modified))
                .run();
            ++changed_;
        }
        return S_ISDIR(st.st_mode);
    }

    // The row of `name` in `dir`, by case-insensitive name.
    std::optional<Indexed> indexed_child(const std::string& dir, const std::string& name) {
        return indexed_child_of(db_, account_, share_, dir, name);
    }

    size_t changed() const { return changed_; }

private:
    db::Database& db_;
    std::string account_, share_;
    fs::path root_;
    size_t changed_ = 0;
};

}  // namespace

size_t FileStore::adopt_disk_changes(const std::string& account, const std::string& share, const std::string& path,
                                     bool whole_subtree) {
    std::vector<std::string> parts = split_share_path(path);
    size_t changed = 0;
    db_.transaction([&](db::Database& db) {
        get_share(account, share);  // 404 ShareNotFound
        Adopter adopter(db, account, share, share_root(account, share));
        std::string stored;
        if (!adopter.ancestors(parts, parts.size(), stored)) return;
        adopter.walk(stored, whole_subtree);
        changed = adopter.changed();
    });
    if (changed > 0) changes_.publish(account, share, path);
    return changed;
}

size_t FileStore::adopt_entry(const std::string& account, const std::string& share, const std::string& path,
                              bool written, bool subtree, const void* origin) {
    std::vector<std::string> parts = split_share_path(path);
    if (parts.empty()) return adopt_disk_changes(account, share, path);
    size_t changed = 0;
    db_.transaction([&](db::Database& db) {
        get_share(account, share);  // 404 ShareNotFound
        Adopter adopter(db, account, share, share_root(account, share));
        std::string dir;
        if (!adopter.ancestors(parts, parts.size() - 1, dir)) return;
        const std::string& name = parts.back();
        if (adopter.sync_child(dir, name, adopter.indexed_child(dir, name), written) && subtree) {
            adopter.walk(dir.empty() ? name : dir + "/" + name);
        }
        changed = adopter.changed();
    });
    changes_.publish(account, share, path, origin);
    return changed;
}

void FileStore::note_write(const std::string& account, const std::string& share, const std::string& path,
                           const void* origin) {
    struct stat st {};
    bool updated = false;
    if (stat_in_share(share_root(account, share), path, st) && S_ISREG(st.st_mode)) {
        db_.transaction([&](db::Database& db) {
            db.prepare(
                  "UPDATE share_entries SET size = ?4, etag = ?5, last_modified = max(last_modified, ?6),"
                  " last_write_time = max(last_modified, ?6), change_time = max(last_modified, ?6), ranges = ''"
                  " WHERE account = ?1 AND share = ?2 AND path = ?3 AND is_dir = 0")
                .bind(1, account)
                .bind(2, share)
                .bind(3, path)
                .bind(4, static_cast<std::int64_t>(st.st_size))
                .bind(5, new_etag())
                .bind(6, mtime_ticks(st))
                .run();
            updated = sqlite3_changes(db.handle()) > 0;
        });
    }
    if (!updated) {
        adopt_entry(account, share, path, true, false, origin);
    } else {
        changes_.publish(account, share, path, origin);
    }
}

void FileStore::begin_direct_writes(dev_t device, ino_t inode) {
    std::lock_guard guard(direct_mutex_);
    if (direct_writes_[{device, inode}]++ == 0) ++direct_files_;
}

void FileStore::end_direct_writes(dev_t device, ino_t inode) {
    std::lock_guard guard(direct_mutex_);
    auto it = direct_writes_.find({device, inode});
    if (it == direct_writes_.end() || --it->second > 0) return;
    direct_writes_.erase(it);
    --direct_files_;
}

std::shared_ptr<void> FileStore::follow_disk_writes(const std::string& account, const std::string& share) {
    auto key = std::make_pair(account, share);
    {
        std::lock_guard guard(followed_mutex_);
        ++followed_[key];
        ++followed_count_;
    }
    // When the last token goes (the share unmounted everywhere), what was written there and never
    // read through REST joins the index: nothing follows the disk for it any more.
    return std::shared_ptr<void>(nullptr, [this, key](void*) {
        bool last = false;
        {
            std::lock_guard guard(followed_mutex_);
            if (--followed_[key] == 0) {
                followed_.erase(key);
                last = true;
            }
            --followed_count_;
        }
        if (!last) return;
        try {
            adopt_disk_changes(key.first, key.second, "");
        } catch (const std::exception&) {
            // The share is gone: nothing to index.
        }
    });
}

void FileStore::sync_from_disk(const std::string& account, const std::string& share, const std::string& path,
                               bool listing) {
    if (followed_count_.load() == 0) return;
    {
        std::lock_guard guard(followed_mutex_);
        if (!followed_.contains({account, share})) return;
    }
    std::string wanted;
    for (const std::string& part : split_share_path(path)) wanted += (wanted.empty() ? "" : "/") + part;
    // The row's spelling is the disk's (names are case-insensitive, the disk is not).
    std::optional<Indexed> row;
    std::string on_disk = wanted;
    if (!wanted.empty()) {
        db_.read([&](db::Database& db) {
            auto q = db.prepare(
                "SELECT id, name, is_dir, size, last_modified, path FROM share_entries"
                " WHERE account = ?1 AND share = ?2 AND path = ?3");
            q.bind(1, account).bind(2, share).bind(3, wanted);
            if (!q.step()) return;
            row = Indexed{q.column_int(0), q.column_text(1), q.column_int(2) != 0,
                          static_cast<std::uint64_t>(q.column_int(3)), q.column_int(4)};
            on_disk = q.column_text(5);
        });
    }
    if (listing) {  // the directory and its entries (adopt_disk_changes indexes its ancestors first)
        adopt_disk_changes(account, share, on_disk, /*whole_subtree=*/false);
        return;
    }
    if (wanted.empty()) return;
    struct stat st {};
    const bool there = stat_in_share(share_root(account, share), on_disk, st) && (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode));
    const bool same = there ? row && row->is_dir == S_ISDIR(st.st_mode) &&
                                  (row->is_dir || (row->size == static_cast<std::uint64_t>(st.st_size) &&
                                                   mtime_ticks(st) <= row->last_modified + kStoreWriteSlack))
                            : !row;
    if (!same) adopt_entry(account, share, on_disk, false, false);
}

FileStore::DirectFiles FileStore::direct_files_now() {
    DirectFiles out;
    if (direct_files_.load() == 0) return out;
    std::lock_guard guard(direct_mutex_);
    for (const auto& [file, opens] : direct_writes_) out.insert(file);
    return out;
}

bool FileStore::caught_up_direct_writes(const std::string& account, const std::string& share, const ShareEntry& entry,
                                        const DirectFiles& direct, const void* origin) {
    if (direct.empty() || entry.is_dir) return false;
    struct stat st {};
    if (!stat_in_share(share_root(account, share), entry.path, st)) return false;
    if (!direct.contains({st.st_dev, st.st_ino})) return false;
    // Timestamps are fine-grained once read (Linux 6.13+): a write after this stat gets a later one.
    if (static_cast<std::uint64_t>(st.st_size) == entry.size && mtime_ticks(st) <= time::to_ticks(entry.last_modified)) {
        return false;
    }
    // Read through REST: an origin of no mount, so that the change is published without waiting.
    note_write(account, share, entry.path, origin ? origin : this);
    return true;
}

void FileStore::catch_up_direct_writes(const std::string& account, const std::string& share, const std::string& path,
                                       const void* origin) {
    const DirectFiles direct = direct_files_now();
    ShareEntry entry;
    try {
        entry = get_file_row(account, share, path);
    } catch (const StorageError&) {
        return;  // not indexed (yet): the mount's own adopt_entry deals with it
    }
    caught_up_direct_writes(account, share, entry, direct, origin);
}

}  // namespace bai::storage
