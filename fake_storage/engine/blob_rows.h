// The rows of containers and blobs in state.db: how they are read, found and keyed, shared by
// the files that implement the BlobStore. Internal to the engine.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/db/database.h"
#include "fake_storage/engine/blob_store.h"

namespace bai::storage {

inline constexpr const char* kBlobColumns =
    "container, name, content_id, size, etag, created, last_modified, content, metadata, composed, lease,"
    " snapshot, blob_type, block_count, sealed, sequence_number, tier, tier_changed, archive_status, tags,"
    " copy_state, id, version_id";
// The same columns of `blobs b` in a join.
inline constexpr const char* kBlobColumnsOfB =
    "b.container, b.name, b.content_id, b.size, b.etag, b.created, b.last_modified, b.content,"
    " b.metadata, b.composed, b.lease, b.snapshot, b.blob_type, b.block_count, b.sealed, b.sequence_number,"
    " b.tier, b.tier_changed, b.archive_status, b.tags, b.copy_state, b.id, b.version_id";
inline constexpr int kBlobColumnCount = 23;
// kBlobColumns in their places with what read_blob_brief reads, NULL for the rest (a mount's
// listing reads no more of each row).
inline constexpr const char* kBriefBlobColumns =
    "container, name, NULL, size, NULL, created, last_modified, NULL, CASE size WHEN 0 THEN metadata END,"
    " NULL, NULL, snapshot, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, id, NULL";

BlobInfo read_blob(db::Statement& q);
// read_blob of what ListOptions::brief asks for.
BlobInfo read_blob_brief(db::Statement& q);
ContainerInfo read_container(db::Statement& q);

// A blob written without a content type gets the service's default; Set Blob Properties
// without one clears it (the stored type is then empty).
ContentSettings with_default_type(ContentSettings content);

[[noreturn]] void container_not_found();
[[noreturn]] void blob_not_found();
[[noreturn]] void invalid_blob_type();  // 409 InvalidBlobType: an operation of another blob type

// The blob (or one of its snapshots), or nullopt; ContainerNotFound when its container does not
// exist (one statement: it is the whole read of a GET). With `inline_body`, also reads the bytes
// of a blob stored inline (an append blob's tail after its parts).
std::optional<BlobInfo> find_blob(db::Database& db, const std::string& account, const std::string& container,
                                  const std::string& name, std::string* inline_body = nullptr,
                                  const std::string& snapshot = "");
std::optional<ContainerInfo> find_container(db::Database& db, const std::string& account, const std::string& name);
BlobInfo require_blob(db::Database& db, const std::string& account, const std::string& container,
                      const std::string& name, const std::string& snapshot = "");
// The committed blocks of the blob in row `row`, in order.
std::vector<CommittedBlock> committed_blocks_of(db::Database& db, std::int64_t row);
// The block files a composed blob (or a page blob) is made of (with repeats when a block is used twice).
std::vector<std::string> part_files(db::Database& db, std::int64_t row);
// Writes a blob row's committed blocks (or an append blob's parts), in order.
void insert_committed_blocks(db::Database& db, std::int64_t row, const std::vector<CommittedBlock>& blocks);
// A page blob's written pages, in order; and writing them for a blob's row.
std::vector<PageRow> page_rows_of(db::Database& db, std::int64_t row);
void insert_page_rows(db::Database& db, std::int64_t row, const std::vector<PageRow>& rows);
std::optional<Version> version_of(const std::optional<BlobInfo>& blob);
void check_block_id(const std::string& id);
// Names that start with `prefix` sort below prefix + "\xFF": UTF-8 never contains 0xFF.
std::string prefix_end(const std::string& prefix);
// Inside a write: deletes the rows of a container (a deleted container's key too) and of its
// blobs, adding the files they held to `garbage` (for remove_contents once committed).
void drop_container(db::Database& db, const std::string& account, const std::string& key,
                    std::vector<std::pair<ContentKind, std::string>>& garbage);
// Runs a file removal list after the metadata that referenced the files is gone.
void remove_contents(ContentFiles& files, const std::string& account,
                     const std::vector<std::pair<ContentKind, std::string>>& ids);

// Inserts a snapshot of the base blob in row `base_row`, named by the time now (or the next free
// tick after it), with `content_id` (a link of the base's file, or ""), `metadata` and `pages`
// (its page rows, links of the base's): the snapshot's name. Inside a write.
std::string insert_snapshot_row(db::Database& db, const std::string& account, const BlobInfo& base, const std::string& content_id,
                                const Metadata& metadata, const std::vector<CommittedBlock>& blocks,
                                const std::vector<PageRow>& pages);

// A row that copies the blob in `base.row` under `key` (a snapshot's time, or a version's key)
// with `content_id` (a link of the base's file, or ""), `metadata`, and its committed blocks and
// page rows (links of the base's): the new row. Inside a write.
std::int64_t insert_blob_copy(db::Database& db, const BlobInfo& base, const std::string& key, const std::string& version_id,
                              const std::string& content_id, const Metadata& metadata,
                              const std::vector<CommittedBlock>& blocks, const std::vector<PageRow>& pages);

// Versions (blob_versions.cpp), inside a write. A new version id for `blob`: the time now, to the
// tick, that none of its versions has.
std::string new_version_id(db::Database& db, const std::string& account, const BlobInfo& blob);
// The base blob's row becomes a previous version (keyed by its version id, or a new one when it
// had none), its files with it: for a write that replaces the row. The version id.
std::string keep_row_as_version(db::Database& db, const std::string& account, const BlobInfo& base);
// The tier set on the latest previous version of a name ("" for none, or an inferred tier).
std::string latest_version_tier(db::Database& db, const std::string& account, const std::string& container,
                                const std::string& name);
// A previous version holding what the base blob holds now, through hard links of its files (the
// links made are added to `linked`, the caller's to remove if the write fails): for a write that
// keeps the row. The version id.
std::string keep_copy_as_version(db::Database& db, ContentFiles& files, const std::string& account, const BlobInfo& base,
                                 std::vector<std::pair<ContentKind, std::string>>& linked);

// Soft delete (soft_delete.cpp), inside a write: the row is kept as deleted now, its lease gone.
void keep_as_deleted(db::Database& db, const BlobInfo& row);

std::string signed_identifiers_to_json(const std::vector<SignedIdentifier>& identifiers);
std::vector<SignedIdentifier> signed_identifiers_from_json(const std::string& json);
std::string copy_state_to_json(const CopyState& copy);
CopyState copy_state_from_json(const std::string& json);

// Hard links of block files for a copy of a blob within its account: one new file per file,
// however many committed blocks or page runs name it. The links made are the caller's to remove
// if the copy fails.
class BlockLinks {
public:
    BlockLinks(ContentFiles& files, const std::string& account) : files_(files), account_(account) {}
    // The id of the link of block file `id` (made on first use; throws when `id` is gone).
    const std::string& of(const std::string& id);
    std::vector<std::pair<ContentKind, std::string>>& made() { return made_; }

private:
    ContentFiles& files_;
    const std::string& account_;
    std::map<std::string, std::string> links_;
    std::vector<std::pair<ContentKind, std::string>> made_;
};

// Appends a blob part's bytes to `writer`: from its file, its memory, or zeros.
void append_part(ContentWriter& writer, const BlobPart& part);
// An opened page blob's written runs (its parts that are not zeros) in one new block file of
// `account`, in order: the rows that name them there (none, and no file, when nothing is written).
std::vector<PageRow> write_runs_into_one_file(ContentFiles& files, const std::string& account, const OpenBlob& blob);

struct FdCloser {
    std::vector<int> fds;
    ~FdCloser() {
        for (int fd : fds) ::close(fd);
    }
};

}  // namespace bai::storage
