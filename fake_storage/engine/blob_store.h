// Containers and block blobs: metadata in SQLite, bytes in ContentFiles. No HTTP here: the Blob
// REST service and the FUSE mounts both call this. Errors are StorageError with the service's
// status and code.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/db/database.h"
#include "fake_storage/engine/conditions.h"
#include "fake_storage/engine/content_files.h"
#include "fake_storage/engine/properties.h"

namespace bai::storage {

struct ContainerInfo {
    std::string name;
    std::string etag;
    time::TimePoint created;
    time::TimePoint last_modified;
    Metadata metadata;
    std::string public_access;  // "", "blob" or "container"
};

struct BlobInfo {
    std::string container;
    std::string name;
    std::string content_id;  // "" when the bytes are stored inline

    std::uint64_t size = 0;
    std::string etag;
    time::TimePoint created;
    time::TimePoint last_modified;
    ContentSettings content;
    Metadata metadata;
};

struct BlockInfo {
    std::string id;  // base64, as the client sent it
    std::uint64_t size = 0;
};

enum class BlockListType { committed, uncommitted, latest };

struct BlockRef {
    std::string id;
    BlockListType list;  // where to look: Committed, Uncommitted or Latest
};

struct BlockLists {
    std::vector<BlockInfo> committed;
    std::vector<BlockInfo> uncommitted;
    std::optional<BlobInfo> blob;  // the committed blob, when there is one
};

struct ListOptions {
    std::string prefix;
    std::string delimiter;
    std::string marker;
    int max_results = 5000;
};

struct BlobListEntry {
    bool is_prefix = false;
    std::string prefix;  // when is_prefix
    BlobInfo blob;       // otherwise
};

struct BlobListPage {
    std::vector<BlobListEntry> entries;
    std::string next_marker;  // empty at the end
};

struct ContainerListPage {
    std::vector<ContainerInfo> containers;
    std::string next_marker;
};

// A committed blob opened for reading: its properties and its bytes, either in memory (small
// blobs) or behind a descriptor that stays valid even if the blob is replaced or deleted.
struct OpenBlob {
    BlobInfo info;
    int fd = -1;
    std::string bytes;  // when fd < 0
    OpenBlob() = default;
    OpenBlob(OpenBlob&& other) noexcept
        : info(std::move(other.info)), fd(other.fd), bytes(std::move(other.bytes)) {
        other.fd = -1;
    }
    OpenBlob& operator=(OpenBlob&& other) noexcept;
    OpenBlob(const OpenBlob&) = delete;
    ~OpenBlob();
};

inline constexpr std::uint64_t kMaxBlockSize = 4000ull * 1024 * 1024;
inline constexpr size_t kMaxUncommittedBlocks = 100000;
inline constexpr size_t kMaxCommittedBlocks = 50000;

class BlobStore {
public:
    BlobStore(db::Database& db, ContentFiles& files);

    ContainerInfo create_container(const std::string& account, const std::string& name,
                                   const Metadata& metadata, const std::string& public_access);
    ContainerInfo get_container(const std::string& account, const std::string& name);
    void delete_container(const std::string& account, const std::string& name,
                          const Conditions& conditions);
    ContainerInfo set_container_metadata(const std::string& account, const std::string& name,
                                         const Metadata& metadata, const Conditions& conditions);
    ContainerInfo set_container_access(const std::string& account, const std::string& name,
                                       const std::string& public_access,
                                       const Conditions& conditions);
    ContainerListPage list_containers(const std::string& account, const ListOptions& options);

    // Commits `writer`'s bytes as the whole blob (Put Blob), replacing any blob of that name.
    BlobInfo put_blob(const std::string& account, const std::string& container,
                      const std::string& name, ContentWriter& writer,
                      const ContentSettings& content, const Metadata& metadata,
                      const Conditions& conditions);
    void put_block(const std::string& account, const std::string& container,
                   const std::string& blob, const std::string& block_id, ContentWriter& writer);
    BlobInfo put_block_list(const std::string& account, const std::string& container,
                            const std::string& blob, const std::vector<BlockRef>& blocks,
                            const ContentSettings& content, const Metadata& metadata,
                            const Conditions& conditions);
    BlockLists get_block_lists(const std::string& account, const std::string& container,
                               const std::string& blob);

    BlobInfo get_blob(const std::string& account, const std::string& container,
                      const std::string& name);
    OpenBlob open_blob(const std::string& account, const std::string& container,
                       const std::string& name);
    BlobInfo set_blob_content(const std::string& account, const std::string& container,
                              const std::string& name, const ContentSettings& content,
                              const Conditions& conditions);
    BlobInfo set_blob_metadata(const std::string& account, const std::string& container,
                               const std::string& name, const Metadata& metadata,
                               const Conditions& conditions);
    void delete_blob(const std::string& account, const std::string& container,
                     const std::string& name, const Conditions& conditions);
    // Copies a committed blob (within the emulator; synchronous). Metadata: the source's
    // unless `metadata` is given.
    BlobInfo copy_blob(const std::string& account, const std::string& container,
                       const std::string& name, const std::string& source_account,
                       const std::string& source_container, const std::string& source_name,
                       const std::optional<Metadata>& metadata, const Conditions& conditions);
    BlobListPage list_blobs(const std::string& account, const std::string& container,
                            const ListOptions& options);

    // Content ids that metadata refers to (for ContentFiles::sweep at start).
    std::vector<std::string> live_content_ids();

private:
    std::mutex& lock_for(const std::string& account, const std::string& container,
                         const std::string& blob);
    // Reads, checks `conditions`, applies `change`, gives a new ETag and saves.
    BlobInfo update_blob(const std::string& account, const std::string& container,
                         const std::string& name, const Conditions& conditions,
                         const std::function<void(BlobInfo&)>& change);
    ContainerInfo update_container(const std::string& account, const std::string& name,
                                   const Conditions& conditions,
                                   const std::function<void(ContainerInfo&)>& change);
    void require_container(db::Database& db, const std::string& account,
                           const std::string& container);
    BlobInfo commit_body(const std::string& account, const std::string& container,
                         const std::string& name, const std::string& content_id,
                         std::uint64_t size, const ContentSettings& content,
                         const Metadata& metadata, const Conditions& conditions,
                         const std::vector<std::pair<BlockInfo, std::uint64_t>>* committed_blocks,
                         const std::string* inline_body);
    // Stores what `writer` holds: inline when it is in memory, else as a content file.
    BlobInfo commit_writer(const std::string& account, const std::string& container,
                           const std::string& name, ContentWriter& writer,
                           const ContentSettings& content, const Metadata& metadata,
                           const Conditions& conditions,
                           const std::vector<std::pair<BlockInfo, std::uint64_t>>* committed_blocks);

    db::Database& db_;
    ContentFiles& files_;
    std::array<std::mutex, 64> blob_locks_;
};

}  // namespace bai::storage
