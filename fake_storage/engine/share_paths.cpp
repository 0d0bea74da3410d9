#include "fake_storage/engine/share_paths.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

namespace bai::storage {

ShareFd& ShareFd::operator=(ShareFd&& other) noexcept {
    if (this != &other) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
}

ShareFd::~ShareFd() {
    if (fd_ >= 0) ::close(fd_);
}

namespace {

// glibc 2.36 has no wrapper for openat2. No mount point is crossed either (RESOLVE_NO_XDEV): a
// mount a job made inside a share is not share content.
int openat2_beneath(int dir, const char* path, int flags, mode_t mode) {
    open_how how{};
    how.flags = static_cast<std::uint64_t>(flags | O_CLOEXEC);
    how.mode = ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) ? mode : 0;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
    return static_cast<int>(::syscall(SYS_openat2, dir, path, &how, sizeof how));
}

}  // namespace

ShareFd open_in_share(const std::filesystem::path& root, const std::string& relative, int flags, mode_t mode) {
    // The share's directory itself is the emulator's, but it too must not have become a link.
    ShareFd top(::open(root.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!top) return {};
    if (relative.empty()) {
        return ShareFd(openat2_beneath(top.get(), ".", flags, mode));
    }
    return ShareFd(openat2_beneath(top.get(), relative.c_str(), flags, mode));
}

ShareParent parent_in_share(const std::filesystem::path& root, const std::string& relative) {
    const size_t slash = relative.rfind('/');
    ShareParent out;
    out.name = slash == std::string::npos ? relative : relative.substr(slash + 1);
    out.dir = open_in_share(root, slash == std::string::npos ? std::string() : relative.substr(0, slash),
                            O_PATH | O_DIRECTORY);
    return out;
}

void remove_in_share(const std::filesystem::path& root, const std::string& relative, int flags) {
    if (ShareParent where = parent_in_share(root, relative); where.dir) ::unlinkat(where.dir.get(), where.name.c_str(), flags);
}

namespace {

// Empties the directory open as `dir` (on device `device`), then nothing else.
bool empty_directory_at(int dir, dev_t device) {
    const int listing = ::dup(dir);
    if (listing < 0) return false;
    DIR* stream = ::fdopendir(listing);
    if (!stream) {
        ::close(listing);
        return false;
    }
    std::vector<std::string> names;
    while (dirent* e = ::readdir(stream)) {
        const std::string name = e->d_name;
        if (name != "." && name != "..") names.push_back(name);
    }
    ::closedir(stream);
    bool ok = true;
    for (const std::string& name : names) {
        struct stat st {};
        if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone meanwhile
        if (S_ISDIR(st.st_mode)) {
            if (st.st_dev != device) {  // a mount: never entered
                errno = EXDEV;
                ok = false;
                continue;
            }
            ShareFd sub(::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
            if (!sub || !empty_directory_at(sub.get(), device) || ::unlinkat(dir, name.c_str(), AT_REMOVEDIR) != 0) {
                ok = false;
            }
        } else if (::unlinkat(dir, name.c_str(), 0) != 0 && errno != ENOENT) {
            ok = false;
        }
    }
    return ok;
}

}  // namespace

bool remove_tree_in_share(const std::filesystem::path& root, const std::string& relative) {
    ShareParent where = parent_in_share(root, relative);
    if (!where.dir || where.name.empty() || where.name == "." || where.name == "..") {
        if (where.dir) errno = EINVAL;
        return false;
    }
    struct stat st {};
    if (::fstatat(where.dir.get(), where.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return false;
    if (!S_ISDIR(st.st_mode)) return ::unlinkat(where.dir.get(), where.name.c_str(), 0) == 0;
    struct stat parent {};
    if (::fstat(where.dir.get(), &parent) != 0) return false;
    if (st.st_dev != parent.st_dev) {
        errno = EXDEV;
        return false;
    }
    ShareFd dir(::openat(where.dir.get(), where.name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!dir || !empty_directory_at(dir.get(), st.st_dev)) return false;
    return ::unlinkat(where.dir.get(), where.name.c_str(), AT_REMOVEDIR) == 0;
}

bool stat_in_share(const std::filesystem::path& root, const std::string& relative, struct stat& st) {
    if (relative.empty()) {
        ShareFd top = open_in_share(root, "", O_PATH | O_DIRECTORY);
        return top && ::fstat(top.get(), &st) == 0;
    }
    ShareParent where = parent_in_share(root, relative);
    return where.dir && ::fstatat(where.dir.get(), where.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
}

ShareFd open_regular_in_share(const std::filesystem::path& root, const std::string& relative, int flags) {
    // Looked at before it is opened: opening a device or a fifo can do things (a watchdog armed,
    // a terminal taken, a wait for a writer), so only a regular file is ever opened for real.
    ShareFd path = open_in_share(root, relative, O_PATH);
    struct stat st {};
    if (!path) return {};
    if (::fstat(path.get(), &st) != 0) return {};
    if (!S_ISREG(st.st_mode)) {
        errno = ELOOP;  // not a file of the share
        return {};
    }
    const std::string self = "/proc/self/fd/" + std::to_string(path.get());
    return ShareFd(::open(self.c_str(), (flags & ~(O_CREAT | O_EXCL)) | O_NOCTTY | O_CLOEXEC));
}

bool not_share_content(int error) { return error == ELOOP || error == EXDEV || error == ENOTDIR || error == ENXIO; }

}  // namespace bai::storage
