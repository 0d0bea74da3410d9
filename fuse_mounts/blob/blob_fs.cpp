#define FUSE_USE_VERSION 312
#include "fuse_mounts/blob/blob_fs.h"
#include "fuse_mounts/blob/blob_fs_state.h"

#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <vector>

#include "common/log/logger.h"
#include "fake_storage/engine/storage_error.h"
#include "fuse_mounts/common/fuse_server.h"

namespace bai::mounts {

namespace fs = std::filesystem;

namespace {

using namespace blob_fs;

State& state_of(fuse_req_t req) { return *static_cast<State*>(fuse_req_userdata(req)); }

Node& node_of(State& s, fuse_ino_t ino) {
    return ino == FUSE_ROOT_ID ? s.root : *reinterpret_cast<Node*>(static_cast<std::uintptr_t>(ino));
}

Handle& handle_of(fuse_file_info* fi) { return *reinterpret_cast<Handle*>(static_cast<std::uintptr_t>(fi->fh)); }

std::string child_path(State& s, fuse_ino_t parent, const char* name) {
    std::string dir = path_of(s, node_of(s, parent));
    return dir.empty() ? std::string(name) : dir + "/" + name;
}

// The errno for what the store answered.
int errno_of(const storage::StorageError& e) {
    if (e.code() == "DirectoryNotEmpty") return ENOTEMPTY;
    // A leased file or blob written without its lease id: EBUSY, as the local share mount refuses it.
    if (e.code() == "LeaseIdMissing" || e.code().starts_with("LeaseIdMismatchWith")) return EBUSY;
    switch (e.status()) {
        case 403: return EACCES;
        case 404: return ENOENT;
        case 409: return EEXIST;
        case 400: return EINVAL;
        case 412: return EAGAIN;
        default: return EIO;
    }
}

// Runs an operation; the store's errors and unexpected failures become the errno it answers.
template <typename Operation>
void guarded(State& s, fuse_req_t req, const char* what, Operation operation) {
    const storage::StoreChanges::OriginScope origin(&s);  // what this does, the kernel learns from the reply
    try {
        operation();
    } catch (const storage::StorageError& e) {
        fuse_reply_err(req, errno_of(e));
    } catch (const std::system_error& e) {
        fuse_reply_err(req, e.code().value() ? e.code().value() : EIO);
    } catch (const std::exception& e) {
        log::warning("blob container " + s.account + "/" + s.container + ": " + what + ": " + e.what());
        fuse_reply_err(req, EIO);
    }
}

timespec timespec_of(time::TimePoint t) {
    const auto ns = t.time_since_epoch().count();
    return timespec{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
}

std::shared_ptr<Staging> staging_now(State& s, const Node& node) {
    std::lock_guard guard(s.mutex);
    return node.staging;
}

struct stat stat_of(State& s, const Node& node, const Entry& entry) {
    struct stat st {};
    st.st_ino = node.number;
    st.st_nlink = entry.kind == Entry::directory ? 2 : 1;
    st.st_mode = entry.kind == Entry::directory ? (S_IFDIR | 0777) : (S_IFREG | 0777);
    if (s.options.read_only) st.st_mode &= ~static_cast<mode_t>(0222);
    st.st_size = static_cast<off_t>(entry.size);
    st.st_blksize = 4096;
    st.st_blocks = static_cast<blkcnt_t>((entry.size + 511) / 512);
    st.st_mtim = st.st_ctim = timespec_of(entry.modified);
    st.st_atim = st.st_mtim;
    // A file being written shows its staged bytes.
    if (std::shared_ptr<Staging> staging = staging_now(s, node)) {
        struct stat staged {};
        if (::fstat(staging->fd, &staged) == 0) {
            st.st_size = staged.st_size;
            st.st_blocks = staged.st_blocks;
            st.st_mtim = st.st_ctim = staged.st_mtim;
        }
    }
    return st;
}

// The node of `path` with one more lookup held by the kernel (a new one when the path's node was
// of another kind: that one is left to its open files).
Node& hold_node(State& s, const std::string& path, bool directory) {
    std::lock_guard guard(s.mutex);
    if (path.empty()) {
        ++s.root.nlookup;
        return s.root;
    }
    auto it = s.by_path.find(path);
    if (it != s.by_path.end() && it->second->directory != directory) {
        it->second->removed = true;
        s.by_path.erase(it);
        it = s.by_path.end();
    }
    if (it == s.by_path.end()) {
        auto node = std::make_unique<Node>();
        node->path = path;
        node->directory = directory;
        node->number = s.next_number++;
        it = s.by_path.emplace(path, node.get()).first;
        s.nodes.emplace(node.get(), std::move(node));
    }
    ++it->second->nlookup;
    return *it->second;
}

void forget_node(State& s, fuse_ino_t ino, std::uint64_t count) {
    if (ino == FUSE_ROOT_ID) return;
    Node* node = &node_of(s, ino);
    std::lock_guard guard(s.mutex);
    node->nlookup -= std::min(count, node->nlookup);
    if (node->nlookup > 0) return;
    if (!node->removed) s.by_path.erase(node->path);
    s.nodes.erase(node);
}

// Forgets that `path` (and all below it) is there: its nodes stay for their open files.
void mark_removed(State& s, const std::string& path) {
    std::lock_guard guard(s.mutex);
    // Keys starting with `path` are contiguous ("a", "a b", "a/x", "a0"): those at or below it among them.
    for (auto it = s.by_path.lower_bound(path); it != s.by_path.end() && it->first.starts_with(path);) {
        if (!at_or_below(it->first, path)) {
            ++it;
            continue;
        }
        it->second->removed = true;
        it = s.by_path.erase(it);
    }
}

fuse_entry_param entry_param(State& s, Node& node, const Entry& entry) {
    fuse_entry_param e{};
    e.ino = &node == &s.root ? FUSE_ROOT_ID : reinterpret_cast<std::uintptr_t>(&node);
    e.attr = stat_of(s, node, entry);
    e.attr_timeout = s.options.attr_timeout;
    e.entry_timeout = s.options.entry_timeout;
    return e;
}

bool fault_answers(State& s, fuse_req_t req) {
    if (!s.options.faults) return false;
    int err = s.options.faults->next(VolumeKind::container, s.account, s.container);
    if (err == 0) return false;
    fuse_reply_err(req, err);
    return true;
}

bool refuse_if_read_only(State& s, fuse_req_t req) {
    if (!s.options.read_only) return false;
    fuse_reply_err(req, EROFS);
    return true;
}

bool name_too_long(const std::string& path) { return path.size() > kMaxBlobName; }

// ---- operations ----

void op_init(void*, fuse_conn_info* conn) {
    if (conn->capable & FUSE_CAP_AUTO_INVAL_DATA) conn->want |= FUSE_CAP_AUTO_INVAL_DATA;
    conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
    if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC) conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
    if (conn->capable & FUSE_CAP_SPLICE_WRITE) conn->want |= FUSE_CAP_SPLICE_WRITE;
    conn->max_write = 1 << 20;
}

void op_lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
    State& s = state_of(req);
    guarded(s, req, "lookup", [&] {
        const std::string path = child_path(s, parent, name);
        if (name_too_long(path)) return (void)fuse_reply_err(req, ENAMETOOLONG);
        Entry entry = find(s, path);
        if (entry.kind == Entry::none) {
            fuse_entry_param e{};
            e.entry_timeout = s.options.negative_timeout;
            return (void)fuse_reply_entry(req, &e);
        }
        Node& node = hold_node(s, path, entry.kind == Entry::directory);
        fuse_entry_param e = entry_param(s, node, entry);
        if (fuse_reply_entry(req, &e) != 0) forget_node(s, e.ino, 1);
    });
}

void op_forget(fuse_req_t req, fuse_ino_t ino, std::uint64_t nlookup) {
    forget_node(state_of(req), ino, nlookup);
    fuse_reply_none(req);
}

void op_forget_multi(fuse_req_t req, size_t count, fuse_forget_data* forgets) {
    for (size_t i = 0; i < count; ++i) forget_node(state_of(req), forgets[i].ino, forgets[i].nlookup);
    fuse_reply_none(req);
}

// A file open for writing shows its staged bytes; one opened for reading (fi, as the kernel asks
// before it reads) the blob it opened, even after REST replaced or deleted it; otherwise what the
// path is now.
void reply_attr(State& s, fuse_req_t req, Node& node, fuse_file_info* fi) {
    // (A directory's fi, from setattr on an open directory, holds a DirListing: not a Handle.)
    const Handle* handle = fi && !node.directory ? &handle_of(fi) : nullptr;
    bool removed;
    std::shared_ptr<Staging> staging;
    {
        std::lock_guard guard(s.mutex);
        removed = node.removed;
        staging = node.staging;
    }
    Entry entry;
    if (staging || (handle && handle->staging)) {
        entry.kind = Entry::file;
    } else if (handle && !node.directory) {
        entry = entry_of_blob(handle->snapshot.info);
    } else if (removed) {
        return (void)fuse_reply_err(req, ENOENT);
    } else {
        entry = find(s, path_of(s, node));
        if (entry.kind == Entry::none) return (void)fuse_reply_err(req, ENOENT);
    }
    struct stat st = stat_of(s, node, entry);
    fuse_reply_attr(req, &st, s.options.attr_timeout);
}

void op_getattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
    State& s = state_of(req);
    guarded(s, req, "getattr", [&] { reply_attr(s, req, node_of(s, ino), fi); });
}

// Sizes change the blob (through the staging file); modes, owners and times are not part of a
// blob: they succeed and change nothing, as on blobfuse's mounts.
void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat* attr, int to_set, fuse_file_info* fi) {
    State& s = state_of(req);
    if (refuse_if_read_only(s, req) || fault_answers(s, req)) return;
    guarded(s, req, "setattr", [&] {
        Node& node = node_of(s, ino);
        if (to_set & FUSE_SET_ATTR_SIZE) {
            if (node.directory) return (void)fuse_reply_err(req, EISDIR);
            std::shared_ptr<Staging> staging = fi ? handle_of(fi).staging : nullptr;
            bool open_for_writing = staging || staging_now(s, node);
            if (!staging) staging = staging_of(s, node, false);
            {
                std::lock_guard guard(staging->mutex);
                if (::ftruncate(staging->fd, attr->st_size) != 0) return (void)fuse_reply_err(req, errno);
                staging->dirty = true;
                // truncate(2) of a file no one writes is committed now; an open file's at close.
                if (!open_for_writing) commit_locked(s, node, *staging);
            }
            if (!open_for_writing) {
                std::lock_guard guard(s.mutex);
                if (node.staging == staging && staging->handles == 0) node.staging.reset();
            }
        }
        reply_attr(s, req, node, fi);
    });
}

void close_listing(State& s, DirListing* listing) {
    {
        std::lock_guard guard(s.mutex);
        s.listings.erase(listing);
    }
    delete listing;
}

void op_opendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
    State& s = state_of(req);
    guarded(s, req, "opendir", [&] {
        const std::string dir = path_of(s, node_of(s, ino));
        auto listing = std::make_unique<DirListing>();
        listing->items.push_back({".", directory_entry({})});
        listing->items.push_back({"..", directory_entry({})});
        std::map<std::string, Entry> found;
        storage::ListOptions list;
        list.prefix = dir.empty() ? "" : dir + "/";
        list.delimiter = "/";
        list.brief = true;
        do {
            storage::BlobListPage page = s.blobs->list(list);
            for (const storage::BlobListEntry& item : page.entries) {
                std::string name = item.is_prefix ? item.prefix.substr(list.prefix.size()) : item.blob.name.substr(list.prefix.size());
                if (item.is_prefix && !name.empty()) name.pop_back();  // the trailing '/'
                if (name.empty() || name.find('/') != std::string::npos) continue;  // "a//b": not a name
                Entry entry = item.is_prefix ? directory_entry(item.blob.last_modified) : entry_of_blob(item.blob);
                auto [it, added] = found.emplace(name, entry);
                if (!added && entry.kind == Entry::directory && it->second.kind == Entry::directory) {
                    if (!item.is_prefix) it->second = entry;  // the marker has the times
                } else if (!added && it->second.kind == Entry::directory && !item.is_prefix) {
                    it->second = entry;  // a blob named as a virtual directory shows as the file
                }
            }
            list.marker = page.next_marker;
        } while (!list.marker.empty());
        const time::TimePoint container_time = s.blobs->modified();
        for (auto& [name, entry] : found) {
            if (entry.kind == Entry::directory && entry.modified == time::TimePoint{}) entry.modified = container_time;
            listing->items.push_back({name, entry});
        }
        DirListing* open = listing.release();
        {
            std::lock_guard guard(s.mutex);
            s.listings.insert(open);
        }
        fi->fh = reinterpret_cast<std::uintptr_t>(open);
        if (fuse_reply_open(req, fi) != 0) close_listing(s, open);  // interrupted: no releasedir comes
    });
}

// What a plain directory entry carries as its inode number (libfuse's FUSE_UNKNOWN_INO).
constexpr ino_t kUnknownIno = 0xffffffff;

void read_directory(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, fuse_file_info* fi, bool plus) {
    State& s = state_of(req);
    auto& listing = *reinterpret_cast<DirListing*>(static_cast<std::uintptr_t>(fi->fh));
    const std::string dir = path_of(s, node_of(s, ino));
    std::vector<char> buffer(size);
    size_t used = 0;
    for (size_t i = static_cast<size_t>(offset); i < listing.items.size(); ++i) {
        const DirListing::Item& item = listing.items[i];
        const bool dots = item.name == "." || item.name == "..";
        const off_t next = static_cast<off_t>(i + 1);
        size_t entry_size;
        if (plus && !dots) {
            Node& node = hold_node(s, dir.empty() ? item.name : dir + "/" + item.name, item.entry.kind == Entry::directory);
            fuse_entry_param e = entry_param(s, node, item.entry);
            entry_size = fuse_add_direntry_plus(req, buffer.data() + used, size - used, item.name.c_str(), &e, next);
            if (entry_size > size - used) {
                forget_node(s, e.ino, 1);
                break;
            }
        } else {
            fuse_entry_param e{};
            e.attr.st_mode = item.entry.kind == Entry::directory ? S_IFDIR : S_IFREG;
            // Never 0: readdir(3) drops entries whose d_ino is 0 (with plain READDIR, every name
            // after the first READDIRPLUS buffer vanished). The kernel does not use it otherwise.
            e.attr.st_ino = kUnknownIno;
            entry_size = plus ? fuse_add_direntry_plus(req, buffer.data() + used, size - used, item.name.c_str(), &e, next)
                              : fuse_add_direntry(req, buffer.data() + used, size - used, item.name.c_str(), &e.attr, next);
            if (entry_size > size - used) break;
        }
        used += entry_size;
    }
    fuse_reply_buf(req, buffer.data(), used);
}

void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, fuse_file_info* fi) {
    read_directory(req, ino, size, offset, fi, false);
}

void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, fuse_file_info* fi) {
    read_directory(req, ino, size, offset, fi, true);
}

void op_releasedir(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
    close_listing(state_of(req), reinterpret_cast<DirListing*>(static_cast<std::uintptr_t>(fi->fh)));
    fuse_reply_err(req, 0);
}

// Commits what the handle staged, and lets it go.
void close_handle(State& s, std::unique_ptr<Handle> handle) {
    if (handle->staging) {
        const storage::StoreChanges::OriginScope origin(&s);
        try {
            commit(s, *handle->node, *handle->staging);
        } catch (const std::exception& e) {
            log::warning("blob container " + s.account + "/" + s.container + ": commit at close: " + e.what());
        }
    }
    std::lock_guard guard(s.mutex);
    s.handles.erase(handle.get());
    if (handle->staging && --handle->staging->handles == 0 && handle->node->staging == handle->staging) {
        handle->node->staging.reset();
    }
}

void open_handle(State& s, Node& node, fuse_file_info* fi, bool writing, bool truncate) {
    auto handle = std::make_unique<Handle>();
    handle->node = &node;
    handle->append = (fi->flags & O_APPEND) != 0;
    if (writing) {
        handle->staging = staging_of(s, node, truncate);
        std::lock_guard guard(s.mutex);
        ++handle->staging->handles;
    } else {
        std::lock_guard guard(s.mutex);
        handle->staging = node.staging;
        if (handle->staging) ++handle->staging->handles;
    }
    if (!handle->staging) handle->snapshot = s.blobs->open(path_of(s, node));
    {
        std::lock_guard guard(s.mutex);
        s.handles.insert(handle.get());
    }
    fi->fh = reinterpret_cast<std::uintptr_t>(handle.release());
    fi->keep_cache = s.options.kernel_cache ? 1 : 0;
}

void op_create(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t, fuse_file_info* fi) {
    State& s = state_of(req);
    if (refuse_if_read_only(s, req) || fault_answers(s, req)) return;
    guarded(s, req, "create", [&] {
        const std::string path = child_path(s, parent, name);
        if (name_too_long(path)) return (void)fuse_reply_err(req, ENAMETOOLONG);
        Entry entry = find(s, path);
        if (entry.kind == Entry::directory) return (void)fuse_reply_err(req, EISDIR);
        if (entry.kind == Entry::file && (fi->flags & O_EXCL)) return (void)fuse_reply_err(req, EEXIST);
        if (entry.kind == Entry::none) {
            entry = put_empty(s, path, {});  // visible through REST at once, as blobfuse does
        }
        Node& node = hold_node(s, path, false);
        open_handle(s, node, fi, true, (fi->flags & O_TRUNC) != 0);
        fuse_entry_param e = entry_param(s, node, entry);
        if (fuse_reply_create(req, &e, fi) != 0) {  // interrupted: no release comes
            close_handle(s, std::unique_ptr<Handle>(&handle_of(fi)));
            forget_node(s, e.ino, 1);
        }
    });
}

void op_open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
    State& s = state_of(req);
    const bool writing = (fi->flags & O_ACCMODE) != O_RDONLY;
    if (writing && refuse_if_read_only(s, req)) return;
    if (fault_answers(s, req)) return;
    guarded(s, req, "open", [&] {
        Node& node = node_of(s, ino);
        if (node.directory) return (void)fuse_reply_err(req, EISDIR);
        open_handle(s, node, fi, writing, writing && (fi->flags & O_TRUNC));
        if (fuse_reply_open(req, fi) != 0) close_handle(s, std::unique_ptr<Handle>(&handle_of(fi)));
    });
}

void op_read(fuse_req_t req, fuse_ino_t, size_t size, off_t offset, fuse_file_info* fi) {
    State& s = state_of(req);
    if (fault_answers(s, req)) return;
    Handle& handle = handle_of(fi);
    const int fd = handle.staging ? handle.staging->fd.load() : handle.snapshot.single_fd();
    if (fd < 0) {  // a small blob in memory, or one in parts
        // A copy: once the kernel has the reply, the reader may close the file and the release
        // free the handle while this thread is still inside the reply's writev.
        std::string slice(size, '\0');
        ssize_t n = handle.snapshot.read(slice.data(), size, static_cast<std::uint64_t>(offset));
        if (n < 0) return (void)fuse_reply_err(req, errno);
        fuse_reply_buf(req, slice.data(), static_cast<size_t>(n));
        return;
    }
    fuse_bufvec buf = FUSE_BUFVEC_INIT(size);
    buf.buf[0].flags = static_cast<fuse_buf_flags>(FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK);
    buf.buf[0].fd = fd;
    buf.buf[0].pos = offset;
    fuse_reply_data(req, &buf, FUSE_BUF_SPLICE_MOVE);
}

void op_write_buf(fuse_req_t req, fuse_ino_t, fuse_bufvec* in, off_t offset, fuse_file_info* fi) {
    State& s = state_of(req);
    if (fault_answers(s, req)) return;
    Handle& handle = handle_of(fi);
    if (!handle.staging) return (void)fuse_reply_err(req, EBADF);
    std::lock_guard guard(handle.staging->mutex);
    if (handle.append) {
        struct stat st {};
        if (::fstat(handle.staging->fd, &st) == 0) offset = st.st_size;
    }
    try {
        make_room(s, *handle.staging, static_cast<std::uint64_t>(offset) + fuse_buf_size(in));
    } catch (const std::system_error& e) {
        return (void)fuse_reply_err(req, e.code().value() ? e.code().value() : EIO);
    }
    fuse_bufvec out = FUSE_BUFVEC_INIT(fuse_buf_size(in));
    out.buf[0].flags = static_cast<fuse_buf_flags>(FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK);
    out.buf[0].fd = handle.staging->fd;
    out.buf[0].pos = offset;
    ssize_t written = fuse_buf_copy(&out, in, static_cast<fuse_buf_copy_flags>(0));
    if (written < 0) return (void)fuse_reply_err(req, static_cast<int>(-written));
    handle.staging->dirty = true;
    handle.staging->wrote(static_cast<std::uint64_t>(offset), static_cast<std::uint64_t>(offset) + written);
    fuse_reply_write(req, static_cast<size_t>(written));
}

// Each close(2) commits what the file's writers staged: the blob is whole at every close.
void op_flush(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
    State& s = state_of(req);
    Handle& handle = handle_of(fi);
    if (!handle.staging) return (void)fuse_reply_err(req, 0);
    guarded(s, req, "flush", [&] {
        commit(s, *handle.node, *handle.staging);
        fuse_reply_err(req, 0);
    });
}

void op_fsync(fuse_req_t req, fuse_ino_t, int, fuse_file_info* fi) {
    State& s = state_of(req);
    if (fault_answers(s, req)) return;
    Handle& handle = handle_of(fi);
    if (!handle.staging) return (void)fuse_reply_err(req, 0);
    guarded(s, req, "fsync", [&] {
        commit(s, *handle.node, *handle.staging);
        fuse_reply_err(req, 0);
    });
}

void op_release(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
    close_handle(state_of(req), std::unique_ptr<Handle>(&handle_of(fi)));
    fuse_reply_err(req, 0);
}

void op_unlink(fuse_req_t req, fuse_ino_t parent, const char* name) {
    State& s = state_of(req);
    if (refuse_if_read_only(s, req) || fault_answers(s, req)) return;
    guarded(s, req, "unlink", [&] {
        const std::string path = child_path(s, parent, name);
        Entry entry = find(s, path);
        if (entry.kind == Entry::none) return (void)fuse_reply_err(req, ENOENT);
        if (entry.kind == Entry::directory) return (void)fuse_reply_err(req, EISDIR);
        s.blobs->remove(path);
        mark_removed(s, path);
        s.notifier.queue(path, false);  // its virtual directory may have gone with it
        fuse_reply_err(req, 0);
    });
}

void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char* name) {
    State& s = state_of(req);
    if (refuse_if_read_only(s, req) || fault_answers(s, req)) return;
    guarded(s, req, "rmdir", [&] {
        const std::string path = child_path(s, parent, name);
        Entry entry = find(s, path);
        if (entry.kind == Entry::none) return (void)fuse_reply_err(req, ENOENT);
        if (entry.kind != Entry::directory) return (void)fuse_reply_err(req, ENOTDIR);
        if (!s.blobs->hierarchical() && has_children(s, path)) return (void)fuse_reply_err(req, ENOTEMPTY);
        try {
            s.blobs->remove(path);
        } catch (const storage::StorageError& e) {
            if (e.status() != 404 || s.blobs->hierarchical()) throw;
        }
        mark_removed(s, path);
        s.notifier.queue(path, false);
        fuse_reply_err(req, 0);
    });
}

void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t) {
    State& s = state_of(req);
    if (refuse_if_read_only(s, req) || fault_answers(s, req)) return;
    guarded(s, req, "mkdir", [&] {
        const std::string path = child_path(s, parent, name);
        if (name_too_long(path)) return (void)fuse_reply_err(req, ENAMETOOLONG);
        if (find(s, path).kind != Entry::none) return (void)fuse_reply_err(req, EEXIST);
        const Entry entry = put_empty(s, path, storage::Metadata{{kFolderMarker, "true"}});
        Node& node = hold_node(s, path, true);
        fuse_entry_param e = entry_param(s, node, entry);
        if (fuse_reply_entry(req, &e) != 0) forget_node(s, e.ino, 1);
    });
}

// Commits what is staged for nodes at or below `path` (before their blobs are copied).
void commit_staged_under(State& s, const std::string& path) {
    std::vector<std::pair<Node*, std::shared_ptr<Staging>>> staged;
    {
        std::lock_guard guard(s.mutex);
        for (auto& [p, node] : s.by_path) {
            if (node->staging && at_or_below(p, path)) {
                staged.emplace_back(node, node->staging);
            }
        }
    }
    for (auto& [node, staging] : staged) commit(s, *node, *staging);
}

// The nodes at or below `from` now live at `to`.
void move_nodes(State& s, const std::string& from, const std::string& to) {
    std::lock_guard guard(s.mutex);
    std::vector<Node*> moved;
    for (auto it = s.by_path.begin(); it != s.by_path.end();) {
        const std::string& p = it->first;
        if (at_or_below(p, from)) {
            moved.push_back(it->second);
            it = s.by_path.erase(it);
        } else {
            ++it;
        }
    }
    for (Node* node : moved) {
        node->path = to + node->path.substr(from.size());
        auto [it, added] = s.by_path.emplace(node->path, node);
        if (!added) {  // what was there was replaced
            it->second->removed = true;
            it->second = node;
        }
    }
}

void move_blob(State& s, const std::string& from, const std::string& to) {
    s.blobs->copy(from, to);  // the tags as well as the metadata
    s.blobs->remove(from);
}

void op_rename(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_ino_t new_parent, const char* new_name,
               unsigned int flags) {
    State& s = state_of(req);
    if (refuse_if_read_only(s, req) || fault_answers(s, req)) return;
    if (flags & RENAME_EXCHANGE) return (void)fuse_reply_err(req, EINVAL);  // no atomic exchange of blobs
    guarded(s, req, "rename", [&] {
        const std::string from = child_path(s, parent, name);
        const std::string to = child_path(s, new_parent, new_name);
        if (name_too_long(to)) return (void)fuse_reply_err(req, ENAMETOOLONG);
        Entry source = find(s, from);
        if (source.kind == Entry::none) return (void)fuse_reply_err(req, ENOENT);
        if (from == to) return (void)fuse_reply_err(req, 0);
        Entry target = find(s, to);
        if (target.kind != Entry::none && (flags & RENAME_NOREPLACE)) return (void)fuse_reply_err(req, EEXIST);
        if (source.kind == Entry::file) {
            if (target.kind == Entry::directory) return (void)fuse_reply_err(req, EISDIR);
            commit_staged_under(s, from);
            if (!s.blobs->rename(from, to, false)) move_blob(s, from, to);
            mark_removed(s, to);
            move_nodes(s, from, to);
            s.notifier.queue(from, false);
            return (void)fuse_reply_err(req, 0);
        }
        if (to.starts_with(from + "/")) return (void)fuse_reply_err(req, EINVAL);
        if (target.kind == Entry::file) return (void)fuse_reply_err(req, ENOTDIR);
        if (target.kind == Entry::directory) {
            if (has_children(s, to)) return (void)fuse_reply_err(req, ENOTEMPTY);
            try {
                s.blobs->remove(to);
            } catch (const storage::StorageError& e) {
                if (e.status() != 404) throw;
            }
        }
        commit_staged_under(s, from);
        if (s.blobs->rename(from, to, true)) {
            mark_removed(s, to);
            move_nodes(s, from, to);
            s.notifier.queue(from, false);
            return (void)fuse_reply_err(req, 0);
        }
        // Every blob below, then the marker (a directory without one gets none).
        storage::ListOptions list;
        list.prefix = from + "/";
        std::vector<std::string> names;
        do {
            storage::BlobListPage page = s.blobs->list(list);
            for (const auto& item : page.entries) names.push_back(item.blob.name);
            list.marker = page.next_marker;
        } while (!list.marker.empty());
        for (const std::string& blob : names) move_blob(s, blob, to + blob.substr(from.size()));
        if (find_blob(s, from)) move_blob(s, from, to);
        mark_removed(s, to);
        move_nodes(s, from, to);
        s.notifier.queue(from, false);
        fuse_reply_err(req, 0);
    });
}

void op_statfs(fuse_req_t req, fuse_ino_t) {
    State& s = state_of(req);
    struct statvfs st {};
    if (::statvfs(s.options.staging_dir.c_str(), &st) != 0) return (void)fuse_reply_err(req, errno);
    st.f_namemax = 255;
    fuse_reply_statfs(req, &st);
}

fuse_lowlevel_ops operations() {
    fuse_lowlevel_ops ops{};
    ops.init = op_init;
    ops.lookup = op_lookup;
    ops.forget = op_forget;
    ops.forget_multi = op_forget_multi;
    ops.getattr = op_getattr;
    ops.setattr = op_setattr;
    ops.opendir = op_opendir;
    ops.readdir = op_readdir;
    ops.readdirplus = op_readdirplus;
    ops.releasedir = op_releasedir;
    ops.create = op_create;
    ops.open = op_open;
    ops.read = op_read;
    ops.write_buf = op_write_buf;
    ops.flush = op_flush;
    ops.release = op_release;
    ops.fsync = op_fsync;
    ops.unlink = op_unlink;
    ops.rmdir = op_rmdir;
    ops.mkdir = op_mkdir;
    ops.rename = op_rename;
    ops.statfs = op_statfs;
    return ops;
}

}  // namespace

BlobFs::BlobFs(storage::BlobStore& blobs, storage::ContentFiles& content, std::string account, std::string container,
               BlobFsOptions options)
    : BlobFs(std::make_unique<StoreContainer>(blobs, content, std::move(account), std::move(container)),
             std::move(options)) {}

BlobFs::BlobFs(std::unique_ptr<BlobContainer> container, BlobFsOptions options)
    : state_(std::make_unique<State>(std::move(container), std::move(options))) {}

BlobFs::~BlobFs() { unmount(); }

void BlobFs::mount(const fs::path& mountpoint) {
    State& s = *state_;
    if (s.server.running()) throw std::runtime_error("the container is already mounted at " + s.server.mountpoint().string());
    try {
        s.blobs->modified();
    } catch (const storage::StorageError& e) {
        const std::string what = (s.blobs->hierarchical() ? "the file share " : "the blob container ") + s.container +
                                 " of storage account " + s.account;
        if (e.status() == 404) throw std::runtime_error(what + " does not exist");
        throw std::runtime_error("cannot reach " + what + ": " + e.what());
    }
    std::error_code ec;
    fs::create_directories(s.options.staging_dir, ec);
    int probe = ::open(s.options.staging_dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (probe < 0) {
        throw std::runtime_error("cannot stage files in " + s.options.staging_dir.string() + ": " + std::strerror(errno));
    }
    ::close(probe);
    s.root.directory = true;
    s.root.number = FUSE_ROOT_ID;
    s.root.nlookup = 2;
    static const fuse_lowlevel_ops ops = operations();
    FuseMountSpec spec{s.account + "/" + s.container, s.blobs->mount_type(), s.options.read_only};
    spec.kernel_permissions = false;  // every entry is 0777 (0555 read-only, and the mount is then ro)
    s.server.start(ops, &s, mountpoint, spec);
    s.notifier.start(s.blobs->changes(), s.account, s.container, &s,
                     [&s](const std::string& path, bool itself) { invalidate(s, path, itself); });
}

bool BlobFs::serving() const { return state_->server.running() && !state_->server.ended(); }

void BlobFs::unmount() {
    State& s = *state_;
    if (!s.server.running()) return;
    // The connection goes first (notifications then fail at once), then the notifier, and only
    // then the session it uses.
    s.server.interrupt();
    s.notifier.stop();
    s.server.stop();
    // Files still open when the connection went: the kernel releases them no more.
    std::set<Handle*> open;
    {
        std::lock_guard guard(s.mutex);
        open = s.handles;
    }
    for (Handle* handle : open) close_handle(s, std::unique_ptr<Handle>(handle));
    std::lock_guard guard(s.mutex);
    for (DirListing* listing : s.listings) delete listing;
    s.listings.clear();
    s.by_path.clear();
    s.nodes.clear();
}

}  // namespace bai::mounts
