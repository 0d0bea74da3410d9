#include "fake_storage/engine/share_rows.h"

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <tuple>

#include "fake_storage/engine/blob_rows.h"
#include "fake_storage/engine/names.h"
#include "fake_storage/engine/share_paths.h"
#include "fake_storage/engine/share_snapshot_names.h"
#include "fake_storage/engine/storage_error.h"

namespace bai::storage::share_rows {
namespace fs = std::filesystem;

using std::int64_t;


ShareEntry read_entry(db::Statement& q) {
    ShareEntry e;
    e.id = q.column_int(0);
    e.path = q.column_text(1);
    e.name = q.column_text(2);
    e.is_dir = q.column_int(3) != 0;
    e.size = static_cast<std::uint64_t>(q.column_int(4));
    e.etag = q.column_text(5);
    e.last_modified = time::from_ticks(q.column_int(6));
    e.smb.creation_time = time::from_ticks(q.column_int(7));
    e.smb.last_write_time = time::from_ticks(q.column_int(8));
    e.smb.change_time = time::from_ticks(q.column_int(9));
    e.smb.attributes = q.column_text(10);
    e.content = decode_content_settings(q.column_text(11));
    e.metadata = metadata_from_json(q.column_text(12));
    e.lease = lease_from_json(q.column_text(13));
    e.copy = file_copy_from_json(q.column_text(14));
    e.ranges = q.column_text(15);
    e.permission_key = q.column_text(16);
    return e;
}

std::optional<ShareEntry> find_entry(db::Database& db, const std::string& account,
                                     const std::string& share, const std::string& path) {
    auto q = db.prepare(std::string("SELECT ") + kEntryColumns +
                        " FROM share_entries WHERE account = ?1 AND share = ?2 AND path = ?3");
    q.bind(1, account).bind(2, share).bind(3, path);
    if (!q.step()) return std::nullopt;
    return read_entry(q);
}

ShareInfo read_share(db::Statement& q) {
    ShareInfo s;
    const std::string key = q.column_text(0);
    s.snapshot = split_share_snapshot_key(key).second;
    std::tie(s.name, s.deleted_version) = split_deleted_share_key(key);
    s.etag = q.column_text(1);
    s.last_modified = time::from_ticks(q.column_int(2));
    s.metadata = metadata_from_json(q.column_text(3));
    s.quota_gib = q.column_int(4);
    s.lease = lease_from_json(q.column_text(5));
    s.created = time::from_ticks(q.column_int(6));
    s.access_tier = q.column_text(7);
    const std::int64_t changed = q.column_int(8);
    s.access_tier_changed = changed == 0 ? s.created : time::from_ticks(changed);
    s.identifiers = signed_identifiers_from_json(q.column_text(9));
    return s;
}

std::optional<ShareInfo> find_share(db::Database& db, const std::string& account,
                                    const std::string& name) {
    auto q = db.prepare(std::string("SELECT ") + kShareColumns + " FROM shares WHERE account = ?1 AND name = ?2");
    q.bind(1, account).bind(2, name);
    if (!q.step()) return std::nullopt;
    return read_share(q);
}

[[noreturn]] void share_not_found() { fail(404, "ShareNotFound", "The specified share does not exist."); }
[[noreturn]] void resource_not_found() {
    fail(404, "ResourceNotFound", "The specified resource does not exist.");
}
[[noreturn]] void parent_not_found() {
    fail(404, "ParentNotFound", "The specified parent path does not exist.");
}

void require_share(db::Database& db, const std::string& account, const std::string& share) {
    auto q = db.prepare("SELECT 1 FROM shares WHERE account = ?1 AND name = ?2");
    q.bind(1, account).bind(2, share);
    if (!q.step()) share_not_found();
}


SplitPath split(const std::string& path) {
    std::vector<std::string> parts = split_share_path(path);
    SplitPath s;
    for (size_t i = 0; i < parts.size(); ++i) {
        if (i + 1 < parts.size()) s.parent += (s.parent.empty() ? "" : "/") + parts[i];
        s.path += (i == 0 ? "" : "/") + parts[i];
    }
    if (!parts.empty()) s.name = parts.back();
    return s;
}

ShareEntry require_entry(db::Database& db, const std::string& account, const std::string& share,
                         const SplitPath& p) {
    require_share(db, account, share);
    if (auto e = find_entry(db, account, share, p.path)) return *e;
    if (!p.parent.empty()) {
        auto parent = find_entry(db, account, share, p.parent);
        if (!parent || !parent->is_dir) parent_not_found();
    }
    resource_not_found();
}

std::string require_parent(db::Database& db, const std::string& account, const std::string& share,
                           const SplitPath& p) {
    if (p.parent.empty()) return "";
    auto parent = find_entry(db, account, share, p.parent);
    if (!parent || !parent->is_dir) parent_not_found();
    return parent->path;
}

SmbProperties apply_smb(SmbProperties base, const SmbUpdate& u) {
    if (u.creation_time) base.creation_time = *u.creation_time;
    if (u.last_write_time) base.last_write_time = *u.last_write_time;
    if (u.change_time) base.change_time = *u.change_time;
    if (u.attributes) base.attributes = *u.attributes;
    return base;
}

void insert_entry(db::Database& db, const std::string& account, const std::string& share,
                  const std::string& parent, ShareEntry& e) {
    db.prepare(
          "INSERT INTO share_entries(account, share, path, parent, name, is_dir, size, etag,"
          " last_modified, creation_time, last_write_time, change_time, attributes, content, metadata, ranges,"
          " permission_key)"
          " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)")
        .bind(1, account)
        .bind(2, share)
        .bind(3, e.path)
        .bind(4, parent)
        .bind(5, e.name)
        .bind(6, static_cast<int64_t>(e.is_dir))
        .bind(7, static_cast<int64_t>(e.size))
        .bind(8, e.etag)
        .bind(9, time::to_ticks(e.last_modified))
        .bind(10, time::to_ticks(e.smb.creation_time))
        .bind(11, time::to_ticks(e.smb.last_write_time))
        .bind(12, time::to_ticks(e.smb.change_time))
        .bind(13, e.smb.attributes)
        .bind(14, encode_content_settings(e.content))
        .bind(15, metadata_to_json(e.metadata))
        .bind(16, e.ranges)
        .bind(17, e.permission_key)
        .run();
    e.id = sqlite3_last_insert_rowid(db.handle());
}

void save_entry(db::Database& db, const ShareEntry& e) {
    db.prepare(
          "UPDATE share_entries SET size = ?2, etag = ?3, last_modified = ?4, creation_time = ?5,"
          " last_write_time = ?6, change_time = ?7, attributes = ?8, content = ?9, metadata = ?10,"
          " ranges = ?11, permission_key = ?12 WHERE id = ?1")
        .bind(1, e.id)
        .bind(2, static_cast<int64_t>(e.size))
        .bind(3, e.etag)
        .bind(4, time::to_ticks(e.last_modified))
        .bind(5, time::to_ticks(e.smb.creation_time))
        .bind(6, time::to_ticks(e.smb.last_write_time))
        .bind(7, time::to_ticks(e.smb.change_time))
        .bind(8, e.smb.attributes)
        .bind(9, encode_content_settings(e.content))
        .bind(10, metadata_to_json(e.metadata))
        .bind(11, e.ranges)
        .bind(12, e.permission_key)
        .run();
}

void touch(ShareEntry& e) {
    e.etag = new_etag();
    e.last_modified = time::now();
}

[[noreturn]] void io_failure(const std::string& what, const fs::path& path) {
    throw std::runtime_error(what + " " + path.string() + ": " + std::strerror(errno));
}

[[noreturn]] void disk_failure(const std::string& what, const fs::path& path, bool parent) {
    if (errno == EWOULDBLOCK) {  // a process on a node holds a lease on the file
        fail(409, "SharingViolation", "The specified resource is open in a mode that does not allow this operation.");
    }
    if (not_share_content(errno)) {
        if (parent) parent_not_found();
        resource_not_found();
    }
    io_failure(what, path);
}

void check_range_in_file(std::uint64_t offset, std::uint64_t length, std::uint64_t size) {
    if (offset + length > size) {
        fail(416, "InvalidRange", "The range specified is invalid for the current size of the resource.");
    }
}


}  // namespace bai::storage::share_rows
