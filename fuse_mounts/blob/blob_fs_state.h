// What the blob container filesystem keeps (blob_fs.cpp serves the operations,
// blob_fs_lookup.cpp says what a path is in the container and keeps the kernel's caches of it
// coherent with the store). Internal to fuse_mounts/blob.
#pragma once

#include <fuse_lowlevel.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "fuse_mounts/blob/blob_fs.h"
#include "fuse_mounts/common/change_notifier.h"
#include "fuse_mounts/common/fuse_server.h"

namespace bai::mounts {

namespace blob_fs {

inline constexpr std::size_t kMaxBlobName = 1024;
inline constexpr const char* kFolderMarker = "hdi_isfolder";

// What a file open for writing stages in memory at most (blob_fs_staging.cpp).
inline constexpr std::uint64_t kMemoryStagingBytes = 1 << 20;

// A file open for writing: its bytes staged in a memfd or an unnamed local file until they are
// committed.
struct Staging {
    // Reads and stat load it without the mutex; make_room replaces it (under the mutex).
    std::atomic<int> fd{-1};
    bool in_memory = false;
    std::vector<int> retired;  // a memfd that make_room replaced: a read that loaded it may use it
    int handles = 0;
    bool dirty = false;
    // What was written since the bytes were staged or last committed, for a container that takes
    // writes of ranges (BlobContainer::update): the runs written ([start, end), merged), the size
    // the file had then, and whether it must be put whole (staged empty: created or truncated).
    std::map<std::uint64_t, std::uint64_t> written;
    std::uint64_t committed_size = 0;
    bool whole = true;
    void wrote(std::uint64_t start, std::uint64_t end);
    std::mutex mutex;  // writes and commits
    Staging() = default;
    Staging(const Staging&) = delete;
    Staging& operator=(const Staging&) = delete;
    ~Staging();
};

// What the kernel knows by an inode number: a path in the container (which a rename changes).
struct Node {
    std::string path;  // "" for the root
    bool directory = false;
    bool removed = false;  // unlinked, or replaced by something else under its path
    std::uint64_t nlookup = 0;
    std::uint64_t number = 0;  // st_ino
    std::shared_ptr<Staging> staging;
};

// What a name is in the container.
struct Entry {
    enum Kind { none, file, directory } kind = none;
    std::uint64_t size = 0;
    time::TimePoint modified{};
    time::TimePoint created{};
};

struct Handle {
    Node* node = nullptr;
    std::shared_ptr<Staging> staging;  // writes go there, and reads while there is one
    storage::OpenBlob snapshot;        // reads of a file opened read-only
    bool append = false;
};

struct DirListing {
    struct Item {
        std::string name;
        Entry entry;
    };
    std::vector<Item> items;
};

}  // namespace blob_fs

struct BlobFs::State {
    State(std::unique_ptr<BlobContainer> c, BlobFsOptions o)
        : blobs(std::move(c)), account(blobs->account()), container(blobs->container()), options(std::move(o)) {}
    std::unique_ptr<BlobContainer> blobs;
    const std::string account;
    const std::string container;
    BlobFsOptions options;
    std::mutex mutex;  // nodes, by_path, next_number
    blob_fs::Node root;
    std::map<blob_fs::Node*, std::unique_ptr<blob_fs::Node>> nodes;
    std::map<std::string, blob_fs::Node*> by_path;
    std::uint64_t next_number = 2;
    std::set<blob_fs::Handle*> handles;       // open files (what an unmount must still commit and free)
    std::set<blob_fs::DirListing*> listings;  // open directories (freed by an unmount)
    FuseServer server;
    // Changes made elsewhere (REST, the engine, other mounts of the container), to invalidate in
    // this mount's kernel caches.
    ChangeNotifier notifier;
};

namespace blob_fs {

using State = BlobFs::State;

bool is_marker(const storage::BlobInfo& blob);
std::optional<storage::BlobInfo> find_blob(State& s, const std::string& path);
// Whether any blob's name starts with "path/".
bool has_children(State& s, const std::string& path);
Entry directory_entry(time::TimePoint modified);
Entry entry_of_blob(const storage::BlobInfo& blob);
// What `path` is now: a blob (a file, or a directory marker), a virtual directory, or nothing.
Entry find(State& s, const std::string& path);
bool at_or_below(const std::string& candidate, const std::string& path);

inline std::string path_of(State& s, const Node& node) {
    std::lock_guard guard(s.mutex);
    return node.path;
}

// ---- staging and committing (blob_fs_staging.cpp) ----

// The node's staging, made (and filled from the blob unless `truncate`) when it has none.
std::shared_ptr<Staging> staging_of(State& s, Node& node, bool truncate);
// Before a write up to `end`: a staging in memory that would grow past kMemoryStagingBytes
// moves to an unnamed file. Called with staging.mutex held.
void make_room(State& s, Staging& staging, std::uint64_t end);
// Commits a staging as the whole blob at the node's path, keeping the old blob's content
// settings and metadata (nothing when it is not dirty). commit_locked: with staging.mutex held.
void commit_locked(State& s, Node& node, Staging& staging);
void commit(State& s, Node& node, Staging& staging);
// Puts an empty blob (a created file, a directory marker); what it is now.
Entry put_empty(State& s, const std::string& path, const storage::Metadata& metadata);

// Tells the kernel to forget what it may have cached wrongly after a change of `path` ("" for
// the whole container): with `itself`, the path's entry (positive or negative), attributes and
// pages; and its ancestors' entries where one appeared or went with it (a virtual directory
// is there while a blob is below it).
void invalidate(State& s, const std::string& path, bool itself);

}  // namespace blob_fs

}  // namespace bai::mounts
