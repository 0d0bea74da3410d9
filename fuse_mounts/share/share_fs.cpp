#define FUSE_USE_VERSION 312
#include "fuse_mounts/share/share_fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <map>
#include <set>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <vector>

#include "common/log/logger.h"
#include "fuse_mounts/common/change_notifier.h"
#include "fuse_mounts/common/fuse_server.h"

namespace bai::mounts {

namespace fs = std::filesystem;

// An inode the kernel knows: an O_PATH descriptor of the file or directory in the share's
// directory, and how many lookups the kernel holds on it.
struct Inode {
    int fd = -1;
    dev_t dev = 0;
    ino_t ino = 0;
    std::uint64_t nlookup = 0;
    // Its open files: the kernel refuses to mix files it reads and writes itself (passthrough,
    // all to the one backing file registered as `backing_id`) with files it asks us for.
    unsigned passthrough_opens = 0;
    unsigned served_opens = 0;
    int backing_id = 0;
};

// A file the kernel opened through us.
struct OpenFile {
    Inode* inode = nullptr;
    bool passthrough = false;  // the kernel reads and writes it without us
    bool writable = false;
    // Written without the store hearing of each write: registered with it while open.
    bool writes_directly() const { return passthrough && writable; }
};

// An open directory.
struct DirHandle {
    DIR* dir = nullptr;
    off_t offset = 0;
    dirent* entry = nullptr;
};

struct ShareFs::State {
    State(storage::FileStore* f, std::string a, std::string s, ShareFsOptions o)
        : files(f), account(std::move(a)), share(std::move(s)), options(o) {}
    storage::FileStore* files;  // null for a plain directory (a file server's export): no index
    fs::path directory;         // that directory
    std::string account;
    std::string share;
    ShareFsOptions options;
    std::string root_path;  // the share's directory, canonical
    Inode root;
    std::mutex mutex;
    std::map<std::pair<dev_t, ino_t>, std::unique_ptr<Inode>> inodes;
    std::map<int, OpenFile> open_files;  // by descriptor (an unmount closes what is left)
    std::atomic<PassthroughChannel*> passthrough{nullptr};  // when the kernel and the share's files allow it
    std::set<DirHandle*> open_directories;
    FuseServer server;

    // Changes made elsewhere (REST, the engine, other mounts of the share), to invalidate in this
    // mount's kernel caches.
    ChangeNotifier notifier;
    // The share was deleted (or deleted and made anew: another directory) since the mount: every
    // operation that reaches a name answers ENOENT, as the blob mount of a deleted container does.
    // Read by each operation without a system call; set again by each change of the whole share.
    std::atomic<bool> gone{false};
};

namespace {

using State = ShareFs::State;

State& state_of(fuse_req_t req) { return *static_cast<State*>(fuse_req_userdata(req)); }

Inode& inode_of(State& s, fuse_ino_t ino) {
    return ino == FUSE_ROOT_ID ? s.root : *reinterpret_cast<Inode*>(static_cast<std::uintptr_t>(ino));
}

std::string proc_path(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

// How long the kernel may keep entries (positive and negative) and attributes. Changes made
// through this mount update the kernel as they answer; changes made elsewhere are invalidated
// explicitly (notify_changes below), so this only bounds staleness where no one tells us: the
// emulator's own writes into the store directory while a job runs.
constexpr double kCacheSeconds = 1.0;

// The kernel's id of the inode at `path` (relative to the share; "" for the root), when the
// kernel knows it; 0 otherwise.
fuse_ino_t known_inode(State& s, const std::string& path) {
    if (path.empty()) return FUSE_ROOT_ID;
    struct stat st {};
    if (::fstatat(s.root.fd, path.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return 0;
    std::lock_guard guard(s.mutex);
    auto it = s.inodes.find({st.st_dev, st.st_ino});
    return it == s.inodes.end() ? 0 : reinterpret_cast<std::uintptr_t>(it->second.get());
}

// Tells the kernel to forget what it cached of `path`: its entry in its directory (positive or
// negative), its attributes and pages, and its directory's attributes.
void invalidate(State& s, const std::string& path) {
    fuse_session* session = s.server.session();
    const size_t slash = path.rfind('/');
    const std::string parent = slash == std::string::npos ? std::string() : path.substr(0, slash);
    const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
    if (fuse_ino_t dir = known_inode(s, parent)) {
        if (!name.empty()) fuse_lowlevel_notify_inval_entry(session, dir, name.c_str(), name.size());
        fuse_lowlevel_notify_inval_inode(session, dir, -1, 0);
    }
    if (fuse_ino_t ino = name.empty() ? 0 : known_inode(s, path)) fuse_lowlevel_notify_inval_inode(session, ino, 0, 0);
}

// Whether the share is no longer the directory this mount serves: deleted (soft delete moves its
// directory away, and the root's descriptor follows it), or deleted and created again (a new
// directory). Undelete Share moves the same directory back.
bool share_gone(State& s) {
    try {
        s.files->get_share(s.account, s.share);
    } catch (const std::exception&) {
        return true;
    }
    struct stat now {}, served {};
    if (::stat(s.files->share_root(s.account, s.share).c_str(), &now) != 0 ||
        ::fstatat(s.root.fd, "", &served, AT_EMPTY_PATH) != 0) {
        return true;
    }
    return now.st_dev != served.st_dev || now.st_ino != served.st_ino;
}

// A change of the whole share (deleted, undeleted): whether it is gone, then every name the
// kernel may hold at the root (those of the directory the root still opens: a soft-deleted share's
// are all there) and the attributes of every inode it knows, so the next access asks again.
void invalidate_share(State& s) {
    s.gone = share_gone(s);
    fuse_session* session = s.server.session();
    if (int fd = ::openat(s.root.fd, ".", O_RDONLY | O_DIRECTORY); fd >= 0) {
        if (DIR* dir = ::fdopendir(fd)) {
            while (const dirent* d = ::readdir(dir)) {
                const std::string_view name(d->d_name);
                if (name != "." && name != "..") fuse_lowlevel_notify_inval_entry(session, FUSE_ROOT_ID, d->d_name, name.size());
            }
            ::closedir(dir);
        } else {
            ::close(fd);
        }
    }
    fuse_lowlevel_notify_inval_inode(session, FUSE_ROOT_ID, -1, 0);
    std::vector<fuse_ino_t> known;
    {
        std::lock_guard guard(s.mutex);
        for (const auto& [key, inode] : s.inodes) known.push_back(reinterpret_cast<std::uintptr_t>(inode.get()));
    }
    for (fuse_ino_t ino : known) fuse_lowlevel_notify_inval_inode(session, ino, -1, 0);
}

// The path of an inode relative to the share's root ("" for the root); nullopt once it is gone.
std::optional<std::string> share_path(State& s, const Inode& inode) {
    if (&inode == &s.root) return std::string();
    char buffer[PATH_MAX];
    ssize_t n = ::readlink(proc_path(inode.fd).c_str(), buffer, sizeof buffer - 1);
    if (n <= 0) return std::nullopt;
    std::string path(buffer, static_cast<size_t>(n));
    if (path.size() <= s.root_path.size() + 1 || path.compare(0, s.root_path.size(), s.root_path) != 0 ||
        path[s.root_path.size()] != '/' || path.ends_with(" (deleted)")) {
        return std::nullopt;
    }
    return path.substr(s.root_path.size() + 1);
}

std::optional<std::string> child_path(State& s, const Inode& parent, const char* name) {
    std::optional<std::string> dir = share_path(s, parent);
    if (!dir) return std::nullopt;
    return dir->empty() ? std::string(name) : *dir + "/" + name;
}

// The store's index follows a change made through the mount (a failure is logged: the change
// itself is done).
template <typename Indexing>
void index_change(State& s, const std::optional<std::string>& path, Indexing indexing) {
    if (!path || !s.files) return;
    try {
        indexing(*path);
    } catch (const std::exception& e) {
        log::warning("share " + s.account + "/" + s.share + ": could not index " + *path + ": " + e.what());
    }
}

void note(State& s, const std::optional<std::string>& path, bool written, bool subtree = false) {
    index_change(s, path, [&](const std::string& p) { s.files->adopt_entry(s.account, s.share, p, written, subtree, &s); });
}

// New content in a file the index already has (the common case: one statement).
void note_content(State& s, const std::optional<std::string>& path) {
    index_change(s, path, [&](const std::string& p) { s.files->note_write(s.account, s.share, p, &s); });
}

void show_modes(State& s, struct stat& st) {
    const unsigned mask = S_ISDIR(st.st_mode) ? s.options.dir_mode : s.options.file_mode;
    st.st_mode = (st.st_mode & S_IFMT) | (st.st_mode & mask & 07777);
    if (s.options.read_only) st.st_mode &= ~static_cast<mode_t>(0222);
}

int stat_of(State& s, const Inode& inode, struct stat& st) {
    if (::fstatat(inode.fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) return errno;
    show_modes(s, st);
    return 0;
}

// Finds or makes the inode of `name` in `parent`, one more lookup held by the kernel.
int lookup_entry(State& s, fuse_ino_t parent, const char* name, fuse_entry_param& e) {
    e = {};
    int fd = ::openat(inode_of(s, parent).fd, name, O_PATH | O_NOFOLLOW);
    if (fd < 0) return errno;
    struct stat st {};
    if (::fstatat(fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) {
        int err = errno;
        ::close(fd);
        return err;
    }
    Inode* inode = nullptr;
    {
        std::lock_guard guard(s.mutex);
        auto& slot = s.inodes[{st.st_dev, st.st_ino}];
        if (slot) {
            ::close(fd);
        } else {
            slot = std::make_unique<Inode>();
            slot->fd = fd;
            slot->dev = st.st_dev;
            slot->ino = st.st_ino;
        }
        ++slot->nlookup;
        inode = slot.get();
    }
    show_modes(s, st);
    e.ino = reinterpret_cast<std::uintptr_t>(inode);
    e.attr = st;
    e.attr_timeout = kCacheSeconds;
    e.entry_timeout = kCacheSeconds;
    return 0;
}

// Drops the inode once the kernel neither looks it up nor holds a file of it (under s.mutex). A
// forget can come before the release of the inode's last file (the kernel sends forgets first).
void drop_if_unused(State& s, Inode& inode) {
    if (inode.nlookup > 0 || inode.passthrough_opens > 0 || inode.served_opens > 0) return;
    ::close(inode.fd);
    s.inodes.erase({inode.dev, inode.ino});
}

void forget_inode(State& s, fuse_ino_t ino, std::uint64_t count) {
    if (ino == FUSE_ROOT_ID) return;
    Inode& inode = inode_of(s, ino);
    std::lock_guard guard(s.mutex);
    inode.nlookup -= std::min(count, inode.nlookup);
    drop_if_unused(s, inode);
}

// A fault injected into this share's mounts answers the operation instead (after its stall).
bool fault_answers(State& s, fuse_req_t req) {
    if (!s.options.faults) return false;
    int err = s.options.faults->next(VolumeKind::share, s.account, s.share);
    if (err == 0) return false;
    fuse_reply_err(req, err);
    return true;
}

// A deleted share: nothing of it is there (lookups, attributes, opens and every write answer
// ENOENT, and nothing lands in the deleted share's directory) until Undelete Share brings it back.
bool refuse_if_gone(State& s, fuse_req_t req) {
    if (!s.gone.load(std::memory_order_relaxed)) return false;
    fuse_reply_err(req, ENOENT);
    return true;
}

bool refuse_if_read_only(State& s, fuse_req_t req) {
    if (!s.options.read_only) return false;
    fuse_reply_err(req, EROFS);
    return true;
}

// A file with an active lease (Lease File) is written only with its lease id, which a mount has
// none of: its opens for writing, truncation, removal and renames are refused with EBUSY, what a
// Linux SMB mount of Azure Files answers for the service's sharing violation. Checked when the
// write begins: a descriptor opened before the lease was taken keeps writing, as an SMB handle
// opened before it does.
bool refuse_if_leased(State& s, fuse_req_t req, const std::optional<std::string>& path) {
    if (!s.files || !path || path->empty() || !s.files->file_leased(s.account, s.share, *path)) return false;
    fuse_reply_err(req, EBUSY);
    return true;
}

void reply_entry_or_error(fuse_req_t req, int err, const fuse_entry_param& e) {
    if (err) {
        fuse_reply_err(req, err);
    } else {
        fuse_reply_entry(req, &e);
    }
}

// ---- operations ----

void op_init(void* userdata, fuse_conn_info* conn) {
    (void)userdata;
    // Coherence with the REST API: cached pages go when a file's mtime changes, and nothing is
    // written back later.
    if (conn->capable & FUSE_CAP_AUTO_INVAL_DATA) conn->want |= FUSE_CAP_AUTO_INVAL_DATA;
    conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
    if (conn->capable & FUSE_CAP_SPLICE_WRITE) conn->want |= FUSE_CAP_SPLICE_WRITE;
    if (conn->capable & FUSE_CAP_SPLICE_MOVE) conn->want |= FUSE_CAP_SPLICE_MOVE;
    if (conn->capable & FUSE_CAP_PARALLEL_DIROPS) conn->want |= FUSE_CAP_PARALLEL_DIROPS;
    conn->max_write = 1 << 20;
}

void op_lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
    if (refuse_if_gone(state_of(req), req)) return;  // not a negative entry: the undelete needs none dropped
    fuse_entry_param e;
    int err = lookup_entry(state_of(req), parent, name, e);
    if (err == ENOENT) {
        e = {};  // a negative entry
        e.entry_timeout = kCacheSeconds;
        fuse_reply_entry(req, &e);
        return;
    }
    reply_entry_or_error(req, err, e);
}

void op_forget(fuse_req_t req, fuse_ino_t ino, std::uint64_t nlookup) {
    forget_inode(state_of(req), ino, nlookup);
    fuse_reply_none(req);
}

void op_forget_multi(fuse_req_t req, size_t count, fuse_forget_data* forgets) {
    for (size_t i = 0; i < count; ++i) forget_inode(state_of(req), forgets[i].ino, forgets[i].nlookup);
    fuse_reply_none(req);
}

void op_getattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) {
    State& s = state_of(req);
    if (refuse_if_gone(s, req)) return;
    struct stat st {};
    if (int err = stat_of(s, inode_of(s, ino), st)) {
        fuse_reply_err(req, err);
        return;
    }
    fuse_reply_attr(req, &st, kCacheSeconds);
}

void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat* attr, int to_set, fuse_file_info* fi) {
    State& s = state_of(req);
    if (refuse_if_read_only(s, req) || refuse_if_gone(s, req) || fault_answers(s, req)) return;
    Inode& inode = inode_of(s, ino);
    if ((to_set & (FUSE_SET_ATTR_SIZE | FUSE_SET_ATTR_MODE)) && refuse_if_leased(s, req, share_path(s, inode))) return;
    const std::string path = proc_path(inode.fd);
    struct stat st {};
    ::fstatat(inode.fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW);
    // A directory's handle is a DirHandle, not a descriptor: directories go by path.
    if (S_ISDIR(st.st_mode)) fi = nullptr;
    int rc = 0;
    if (to_set & FUSE_SET_ATTR_MODE) {
        const unsigned mask = S_ISDIR(st.st_mode) ? s.options.dir_mode : s.options.file_mode;
        const mode_t mode = attr->st_mode & mask & 07777;
        rc = fi ? ::fchmod(static_cast<int>(fi->fh), mode) : ::chmod(path.c_str(), mode);
    }
    // Owners are not part of a share (as on SMB mounts): a chown succeeds and changes nothing.
    if (rc == 0 && (to_set & FUSE_SET_ATTR_SIZE)) {
        rc = fi ? ::ftruncate(static_cast<int>(fi->fh), attr->st_size) : ::truncate(path.c_str(), attr->st_size);
    }
    if (rc == 0 && (to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME))) {
        timespec times[2] = {{0, UTIME_OMIT}, {0, UTIME_OMIT}};
        if (to_set & FUSE_SET_ATTR_ATIME_NOW) {
            times[0].tv_nsec = UTIME_NOW;
        } else if (to_set & FUSE_SET_ATTR_ATIME) {
            times[0] = attr->st_atim;
        }
        if (to_set & FUSE_SET_ATTR_MTIME_NOW) {
            times[1].tv_nsec = UTIME_NOW;
        } else if (to_set & FUSE_SET_ATTR_MTIME) {
            times[1] = attr->st_mtim;
        }
        rc = fi ? ::futimens(static_cast<int>(fi->fh), times) : ::utimensat(AT_FDCWD, path.c_str(), times, 0);
    }
    if (rc != 0) {
        fuse_reply_err(req, errno);
        return;
    }
    note(s, share_path(s, inode), (to_set & (FUSE_SET_ATTR_SIZE | FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_MTIME_NOW)) != 0);
    op_getattr(req, ino, fi);
}


void close_directory(State& s, DirHandle* handle) {
    {
        std::lock_guard guard(s.mutex);
        s.open_directories.erase(handle);
    }
    ::closedir(handle->dir);
    delete handle;
}

// Whether a fault plan waits for this share's operations: files opened meanwhile are served by us
// (a passed-through file's reads and writes never reach us to be failed).
bool fault_plan_waits(State& s) {
    return s.options.faults && s.options.faults->get(VolumeKind::share, s.account, s.share).has_value();
}

// Whether the kernel reads and writes the file `fd` of `inode` itself (under s.mutex): when the
// mount has passthrough, no file of the inode is served by us, and no fault plan waits; once one
// file of an inode is passed through, all are (the kernel refuses to mix them).
bool choose_passthrough(PassthroughChannel* channel, Inode& inode, int fd, bool plan_waits) {
    if (!channel || inode.served_opens > 0) return false;
    if (inode.passthrough_opens > 0) return true;
    if (plan_waits) return false;
    const int id = channel->open_backing(fd);
    if (id < 0) return false;
    inode.backing_id = id;
    return true;
}

// The kernel no longer holds `fd` (released, or its open reply failed).
void forget_open_file(State& s, int fd) {
    OpenFile file;
    dev_t dev = 0;
    ino_t ino = 0;
    {
        std::lock_guard guard(s.mutex);
        auto it = s.open_files.find(fd);
        if (it != s.open_files.end()) {
            file = it->second;
            s.open_files.erase(it);
            Inode& inode = *file.inode;
            dev = inode.dev;
            ino = inode.ino;
            if (!file.passthrough) {
                --inode.served_opens;
            } else if (--inode.passthrough_opens == 0 && inode.backing_id > 0) {
                if (PassthroughChannel* channel = s.passthrough.load()) channel->close_backing(inode.backing_id);
                inode.backing_id = 0;
            }
            drop_if_unused(s, inode);
        }
    }
    if (file.writes_directly() && s.files) s.files->end_direct_writes(dev, ino);
    ::close(fd);
}

// What the kernel wrote itself into a passed-through file, into the index (at fsync and release;
// between close(2) and the release, the store catches the file up when REST reads it).
void catch_up(State& s, const OpenFile& file) {
    if (!file.writes_directly()) return;
    index_change(s, share_path(s, *file.inode),
                 [&](const std::string& p) { s.files->catch_up_direct_writes(s.account, s.share, p, &s); });
}

OpenFile open_file_of(State& s, std::uint64_t fh) {
    std::lock_guard guard(s.mutex);
    auto it = s.open_files.find(static_cast<int>(fh));
    return it == s.open_files.end() ? OpenFile{} : it->second;
}

// The kernel will release `fd` (a file of `inode` it opened through us), unless the reply did not
// reach it.
void reply_opened(State& s, fuse_req_t req, fuse_file_info* fi, int fd, Inode& inode,
                  const fuse_entry_param* created) {
    PassthroughChannel* channel = s.passthrough.load();
    const bool plan_waits = channel && fault_plan_waits(s);
    OpenFile file{&inode, false, (fi->flags & O_ACCMODE) != O_RDONLY};
    {
        std::lock_guard guard(s.mutex);
        file.passthrough = choose_passthrough(channel, inode, fd, plan_waits);
        ++(file.passthrough ? inode.passthrough_opens : inode.served_opens);
        s.open_files[fd] = file;
        if (file.passthrough) channel->pass_through(static_cast<std::uint64_t>(fd), inode.backing_id);
    }
    if (file.writes_directly() && s.files) s.files->begin_direct_writes(inode.dev, inode.ino);
    fi->fh = static_cast<std::uint64_t>(fd);
    fi->keep_cache = 0;  // what REST wrote since the last open is read afresh
    // No FLUSH at each close of a file the kernel writes itself (one round trip and one index
    // transaction fewer per small file): until its RELEASE, which the kernel sends once close(2)
    // has returned, the file is registered as written directly, and the store's get_file and
    // list_directory bring its entry up to the disk themselves.
    if (file.passthrough) fi->noflush = 1;
    const int err = created ? fuse_reply_create(req, created, fi) : fuse_reply_open(req, fi);
    if (err == 0) return;
    if (file.passthrough) channel->cancel(static_cast<std::uint64_t>(fd));
    forget_open_file(s, fd);
}

void op_opendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
    State& s = state_of(req);
    if (refuse_if_gone(s, req)) return;
    int fd = ::openat(inode_of(s, ino).fd, ".", O_RDONLY | O_DIRECTORY);
    if (fd < 0) {
        fuse_reply_err(req, errno);
        return;
    }
    auto handle = std::make_unique<DirHandle>();
    handle->dir = ::fdopendir(fd);
    if (!handle->dir) {
        int err = errno;
        ::close(fd);
        fuse_reply_err(req, err);
        return;
    }
    {
        std::lock_guard guard(s.mutex);
        s.open_directories.insert(handle.get());
    }
    DirHandle* open = handle.release();
    fi->fh = reinterpret_cast<std::uintptr_t>(open);
    if (fuse_reply_open(req, fi) != 0) close_directory(s, open);  // interrupted: no releasedir comes
}

void read_directory(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, fuse_file_info* fi, bool plus) {
    State& s = state_of(req);
    auto* handle = reinterpret_cast<DirHandle*>(static_cast<std::uintptr_t>(fi->fh));
    std::vector<char> buffer(size);
    size_t used = 0;
    if (offset != handle->offset) {
        ::seekdir(handle->dir, offset);
        handle->entry = nullptr;
        handle->offset = offset;
    }
    int err = 0;
    while (true) {
        if (!handle->entry) {
            errno = 0;
            handle->entry = ::readdir(handle->dir);
            if (!handle->entry) {
                err = errno;
                break;
            }
        }
        const dirent* d = handle->entry;
        const off_t next = d->d_off;
        size_t entry_size = 0;
        const bool dots = std::string_view(d->d_name) == "." || std::string_view(d->d_name) == "..";
        if (plus && !dots) {
            fuse_entry_param e;
            if (lookup_entry(s, ino, d->d_name, e) != 0) {  // gone meanwhile
                handle->entry = nullptr;
                handle->offset = next;
                continue;
            }
            entry_size = fuse_add_direntry_plus(req, buffer.data() + used, size - used, d->d_name, &e, next);
            if (entry_size > size - used) {
                forget_inode(s, e.ino, 1);
                break;
            }
        } else {
            struct stat st {};
            st.st_ino = d->d_ino;
            st.st_mode = static_cast<mode_t>(DTTOIF(d->d_type));
            fuse_entry_param e{};
            e.attr = st;
            entry_size = plus ? fuse_add_direntry_plus(req, buffer.data() + used, size - used, d->d_name, &e, next)
                              : fuse_add_direntry(req, buffer.data() + used, size - used, d->d_name, &st, next);
            if (entry_size > size - used) break;
        }
        used += entry_size;
        handle->entry = nullptr;
        handle->offset = next;
    }
    if (err && used == 0) {
        fuse_reply_err(req, err);
        return;
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
    close_directory(state_of(req), reinterpret_cast<DirHandle*>(static_cast<std::uintptr_t>(fi->fh)));
    fuse_reply_err(req, 0);
}

void op_create(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, fuse_file_info* fi) {
    State& s = state_of(req);
    if (refuse_if_read_only(s, req) || refuse_if_gone(s, req) || fault_answers(s, req)) return;
    if (refuse_if_leased(s, req, child_path(s, inode_of(s, parent), name))) return;  // one there already
    int fd = ::openat(inode_of(s, parent).fd, name, (fi->flags | O_CREAT) & ~O_NOFOLLOW, mode & s.options.file_mode);
    if (fd < 0) {
        fuse_reply_err(req, errno);
        return;
    }
    fuse_entry_param e;
    if (int err = lookup_entry(s, parent, name, e)) {
        ::close(fd);
        fuse_reply_err(req, err);
        return;
    }
    note(s, child_path(s, inode_of(s, parent), name), true);
    reply_opened(s, req, fi, fd, inode_of(s, e.ino), &e);
}

void op_open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
    State& s = state_of(req);
    if (s.options.read_only && (fi->flags & O_ACCMODE) != O_RDONLY) {
        fuse_reply_err(req, EROFS);
        return;
    }
    if (refuse_if_gone(s, req) || fault_answers(s, req)) return;
    Inode& inode = inode_of(s, ino);
    if (((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC)) && refuse_if_leased(s, req, share_path(s, inode))) {
        return;
    }
    int fd = ::open(proc_path(inode.fd).c_str(), fi->flags & ~(O_NOFOLLOW | O_CREAT | O_EXCL));
    if (fd < 0) {
        fuse_reply_err(req, errno);
        return;
    }
    if (fi->flags & O_TRUNC) note(s, share_path(s, inode), true);
    reply_opened(s, req, fi, fd, inode, nullptr);
}

void op_read(fuse_req_t req, fuse_ino_t, size_t size, off_t offset, fuse_file_info* fi) {
    if (fault_answers(state_of(req), req)) return;
    fuse_bufvec buf = FUSE_BUFVEC_INIT(size);
    buf.buf[0].flags = static_cast<fuse_buf_flags>(FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK);
    buf.buf[0].fd = static_cast<int>(fi->fh);
    buf.buf[0].pos = offset;
    fuse_reply_data(req, &buf, FUSE_BUF_SPLICE_MOVE);
}

void op_write_buf(fuse_req_t req, fuse_ino_t ino, fuse_bufvec* in, off_t offset, fuse_file_info* fi) {
    State& s = state_of(req);
    if (refuse_if_gone(s, req) || fault_answers(s, req)) return;
    fuse_bufvec out = FUSE_BUFVEC_INIT(fuse_buf_size(in));
    out.buf[0].flags = static_cast<fuse_buf_flags>(FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK);
    out.buf[0].fd = static_cast<int>(fi->fh);
    out.buf[0].pos = offset;
    ssize_t written = fuse_buf_copy(&out, in, static_cast<fuse_buf_copy_flags>(0));
    if (written < 0) {
        fuse_reply_err(req, static_cast<int>(-written));
        return;
    }
    note_content(s, share_path(s, inode_of(s, ino)));
    fuse_reply_write(req, static_cast<size_t>(written));
}

void op_flush(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
    State& s = state_of(req);
    catch_up(s, open_file_of(s, fi->fh));
    fuse_reply_err(req, 0);
}

void op_release(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
    State& s = state_of(req);
    const int fd = static_cast<int>(fi->fh);
    catch_up(s, open_file_of(s, fi->fh));
    forget_open_file(s, fd);
    fuse_reply_err(req, 0);
}

void op_fsync(fuse_req_t req, fuse_ino_t, int datasync, fuse_file_info* fi) {
    State& s = state_of(req);
    if (fault_answers(s, req)) return;
    int fd = static_cast<int>(fi->fh);
    const int err = (datasync ? ::fdatasync(fd) : ::fsync(fd)) == 0 ? 0 : errno;
    catch_up(s, open_file_of(s, fi->fh));
    fuse_reply_err(req, err);
}

void remove_entry(fuse_req_t req, fuse_ino_t parent, const char* name, int flags) {
    State& s = state_of(req);
    if (refuse_if_read_only(s, req) || refuse_if_gone(s, req) || fault_answers(s, req)) return;
    Inode& dir = inode_of(s, parent);
    std::optional<std::string> path = child_path(s, dir, name);
    if (flags == 0 && refuse_if_leased(s, req, path)) return;
    if (::unlinkat(dir.fd, name, flags) != 0) {
        fuse_reply_err(req, errno);
        return;
    }
    note(s, path, false);
    fuse_reply_err(req, 0);
}

void op_unlink(fuse_req_t req, fuse_ino_t parent, const char* name) { remove_entry(req, parent, name, 0); }
void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char* name) { remove_entry(req, parent, name, AT_REMOVEDIR); }

void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode) {
    State& s = state_of(req);
    if (refuse_if_read_only(s, req) || refuse_if_gone(s, req) || fault_answers(s, req)) return;
    if (::mkdirat(inode_of(s, parent).fd, name, mode & s.options.dir_mode) != 0) {
        fuse_reply_err(req, errno);
        return;
    }
    fuse_entry_param e;
    int err = lookup_entry(s, parent, name, e);
    if (!err) note(s, child_path(s, inode_of(s, parent), name), false);
    reply_entry_or_error(req, err, e);
}

void op_rename(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_ino_t new_parent, const char* new_name,
               unsigned int flags) {
    State& s = state_of(req);
    if (refuse_if_read_only(s, req) || refuse_if_gone(s, req) || fault_answers(s, req)) return;
    Inode& from = inode_of(s, parent);
    Inode& to = inode_of(s, new_parent);
    std::optional<std::string> old_path = child_path(s, from, name);
    std::optional<std::string> new_path = child_path(s, to, new_name);
    if (refuse_if_leased(s, req, old_path) || refuse_if_leased(s, req, new_path)) return;
    if (::renameat2(from.fd, name, to.fd, new_name, flags) != 0) {
        fuse_reply_err(req, errno);
        return;
    }
    note(s, old_path, false, true);
    note(s, new_path, true, true);
    fuse_reply_err(req, 0);
}

void op_statfs(fuse_req_t req, fuse_ino_t) {
    State& s = state_of(req);
    struct statvfs st {};
    if (::fstatvfs(s.root.fd, &st) != 0) {
        fuse_reply_err(req, errno);
        return;
    }
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

ShareFs::ShareFs(storage::FileStore& files, std::string account, std::string share, ShareFsOptions options)
    : state_(std::make_unique<State>(&files, std::move(account), std::move(share), options)) {}

ShareFs::ShareFs(fs::path directory, std::string name, ShareFsOptions options)
    : state_(std::make_unique<State>(nullptr, std::move(name), "", options)) {
    state_->directory = std::move(directory);
}

ShareFs::~ShareFs() { unmount(); }

bool ShareFs::passes_through() const { return state_->passthrough.load() != nullptr; }

void ShareFs::mount(const fs::path& mountpoint) {
    State& s = *state_;
    if (s.server.running()) throw std::runtime_error("the share is already mounted at " + s.server.mountpoint().string());
    if (s.files) s.files->get_share(s.account, s.share);  // throws when it does not exist
    std::error_code ec;
    s.root_path = fs::canonical(s.files ? s.files->share_root(s.account, s.share) : s.directory, ec).string();
    if (ec) throw std::runtime_error("cannot open the directory to serve: " + ec.message());
    s.root.fd = ::open(s.root_path.c_str(), O_PATH | O_DIRECTORY);
    if (s.root.fd < 0) throw std::runtime_error("cannot open " + s.root_path);
    s.root.nlookup = 2;
    static const fuse_lowlevel_ops ops = operations();
    try {
        if (s.files) {
            s.server.start(ops, &s, mountpoint,
                           {s.account + "/" + s.share, "bai-share", s.options.read_only, s.options.passthrough});
            s.notifier.start(s.files->changes(), s.account, s.share, &s,
                             [&s](const std::string& path, bool) {
                                 if (path.empty()) {
                                     invalidate_share(s);
                                 } else {
                                     invalidate(s, path);
                                 }
                             });
        } else {
            s.server.start(ops, &s, mountpoint, {s.account, "bai-export", s.options.read_only, s.options.passthrough});
        }
        PassthroughChannel* channel = s.server.passthrough();
        if (channel && channel->can_back_files_in(s.root_path)) s.passthrough = channel;
    } catch (...) {
        s.notifier.stop();
        ::close(s.root.fd);
        s.root.fd = -1;
        throw;
    }
}

void ShareFs::unmount() {
    State& s = *state_;
    if (!s.server.running()) return;
    // The connection goes first (notifications then fail at once), then the subscription and the
    // notifier, and only then the session they use.
    s.server.interrupt();
    s.notifier.stop();
    s.server.stop();
    s.passthrough = nullptr;
    std::lock_guard guard(s.mutex);
    for (auto& [fd, file] : s.open_files) {  // files the kernel will not release any more
        if (file.writes_directly() && s.files) s.files->end_direct_writes(file.inode->dev, file.inode->ino);
        ::close(fd);
    }
    s.open_files.clear();
    for (DirHandle* handle : s.open_directories) {
        ::closedir(handle->dir);
        delete handle;
    }
    s.open_directories.clear();
    for (auto& [key, inode] : s.inodes) ::close(inode->fd);
    s.inodes.clear();
    ::close(s.root.fd);
    s.root.fd = -1;
}

}  // namespace bai::mounts
