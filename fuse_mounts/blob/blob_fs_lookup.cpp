#define FUSE_USE_VERSION 312
#include "fuse_mounts/blob/blob_fs_state.h"

#include "fake_storage/engine/storage_error.h"

namespace bai::mounts::blob_fs {

bool is_marker(const storage::BlobInfo& blob) {
    auto it = blob.metadata.find(kFolderMarker);
    return it != blob.metadata.end() && (it->second == "true" || it->second == "True" || it->second == "TRUE");
}

std::optional<storage::BlobInfo> find_blob(State& s, const std::string& path) {
    try {
        return s.blobs->properties(path);
    } catch (const storage::StorageError& e) {
        // The container (or share) itself missing is an error, not a name that is not there: no
        // negative entry is cached, so its restore is seen at once whatever the timeouts.
        if (e.status() != 404 || e.code() == "ContainerNotFound" || e.code() == "ShareNotFound") throw;
        return std::nullopt;
    }
}

bool has_children(State& s, const std::string& path) {
    storage::ListOptions list;
    list.prefix = path.empty() ? "" : path + "/";
    list.max_results = 1;
    return !s.blobs->list(list).entries.empty();
}

Entry directory_entry(time::TimePoint modified) {
    Entry e;
    e.kind = Entry::directory;
    e.modified = e.created = modified;
    return e;
}

Entry entry_of_blob(const storage::BlobInfo& blob) {
    if (is_marker(blob)) {
        Entry e = directory_entry(blob.last_modified);
        e.created = blob.created;
        return e;
    }
    Entry e;
    e.kind = Entry::file;
    e.size = blob.size;
    e.modified = blob.last_modified;
    e.created = blob.created;
    return e;
}

Entry find(State& s, const std::string& path) {
    if (path.empty()) return directory_entry(s.blobs->modified());
    if (std::optional<storage::BlobInfo> blob = find_blob(s, path)) return entry_of_blob(*blob);
    if (!s.blobs->hierarchical() && has_children(s, path)) return directory_entry(s.blobs->modified());
    return {};
}

bool at_or_below(const std::string& candidate, const std::string& path) {
    return candidate.starts_with(path) && (candidate.size() == path.size() || candidate[path.size()] == '/');
}

namespace {

std::string parent_of(const std::string& path) {
    const size_t slash = path.rfind('/');
    return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

std::string name_in_parent(const std::string& path) {
    const size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The kernel's id of the node at `path` when the kernel holds one; 0 otherwise. (A node may be
// forgotten right after: an invalidation of an id the kernel no longer has does nothing.)
fuse_ino_t known_inode(State& s, const std::string& path) {
    if (path.empty()) return FUSE_ROOT_ID;
    std::lock_guard guard(s.mutex);
    auto it = s.by_path.find(path);
    return it == s.by_path.end() ? 0 : reinterpret_cast<std::uintptr_t>(it->second);
}

void invalidate_entry(fuse_session* session, fuse_ino_t parent, const std::string& name) {
    fuse_lowlevel_notify_inval_entry(session, parent, name.c_str(), name.size());
}

}  // namespace

void invalidate(State& s, const std::string& path, bool itself) {
    fuse_session* session = s.server.session();
    if (path.empty()) {  // a container deleted or created: every name the kernel holds
        std::vector<std::string> top;
        {
            std::lock_guard guard(s.mutex);
            for (const auto& [p, node] : s.by_path) {
                if (p.find('/') == std::string::npos) top.push_back(p);
            }
        }
        for (const std::string& name : top) invalidate_entry(session, FUSE_ROOT_ID, name);
        fuse_lowlevel_notify_inval_inode(session, FUSE_ROOT_ID, -1, 0);
        return;
    }
    if (itself) {
        if (fuse_ino_t dir = known_inode(s, parent_of(path))) {
            invalidate_entry(session, dir, name_in_parent(path));
            fuse_lowlevel_notify_inval_inode(session, dir, -1, 0);
        }
        if (fuse_ino_t ino = known_inode(s, path)) fuse_lowlevel_notify_inval_inode(session, ino, 0, 0);
    }
    // Up from the parent: a directory the kernel holds and that is still there ends the walk (it
    // and those above it are as the kernel knows them); one it does not hold may be a negative
    // entry (the blob made it appear), one that went is dropped.
    for (std::string dir = parent_of(path); !dir.empty(); dir = parent_of(dir)) {
        if (known_inode(s, dir) && find(s, dir).kind != Entry::none) break;
        if (fuse_ino_t parent = known_inode(s, parent_of(dir))) invalidate_entry(session, parent, name_in_parent(dir));
    }
}

}  // namespace bai::mounts::blob_fs
