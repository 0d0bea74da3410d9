// The rows of shares and their entries in state.db, and the errors the File service answers
// about paths: shared by the files that implement the FileStore. Internal to the engine.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "common/db/database.h"
#include "fake_storage/engine/file_store.h"

namespace bai::storage::share_rows {

inline constexpr const char* kEntryColumns =
    "id, path, name, is_dir, size, etag, last_modified, creation_time, last_write_time,"
    " change_time, attributes, content, metadata, lease, copy, ranges, permission_key";

ShareEntry read_entry(db::Statement& q);
std::optional<ShareEntry> find_entry(db::Database& db, const std::string& account, const std::string& share,
                                     const std::string& path);
inline constexpr const char* kShareColumns =
    "name, etag, last_modified, metadata, quota, lease, created, access_tier, access_tier_changed, signed_identifiers";
// A row of kShareColumns.
ShareInfo read_share(db::Statement& q);
std::optional<ShareInfo> find_share(db::Database& db, const std::string& account, const std::string& name);

[[noreturn]] void share_not_found();
[[noreturn]] void resource_not_found();
[[noreturn]] void parent_not_found();
void require_share(db::Database& db, const std::string& account, const std::string& share);

struct SplitPath {
    std::string path;    // normalised: components joined with '/'
    std::string parent;  // "" for the root
    std::string name;
};
SplitPath split(const std::string& path);

// The entry at `path`, or 404 ParentNotFound / ResourceNotFound as the service tells them apart.
ShareEntry require_entry(db::Database& db, const std::string& account, const std::string& share, const SplitPath& p);
// The stored path of the parent directory (case as created); 404 ParentNotFound if missing.
std::string require_parent(db::Database& db, const std::string& account, const std::string& share,
                           const SplitPath& p);

SmbProperties apply_smb(SmbProperties base, const SmbUpdate& u);
void insert_entry(db::Database& db, const std::string& account, const std::string& share, const std::string& parent,
                  ShareEntry& e);
void save_entry(db::Database& db, const ShareEntry& e);
// A new ETag and Last-Modified.
void touch(ShareEntry& e);

[[noreturn]] void io_failure(const std::string& what, const std::filesystem::path& path);
// A failed call on a path of a share's directory: where a link (or a file in place of a directory)
// is in the way, the path is not share content and answers as missing (share_paths.h).
[[noreturn]] void disk_failure(const std::string& what, const std::filesystem::path& path, bool parent = false);
void check_range_in_file(std::uint64_t offset, std::uint64_t length, std::uint64_t size);

}  // namespace bai::storage::share_rows
