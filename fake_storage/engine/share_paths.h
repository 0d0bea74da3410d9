// Paths inside a share's directory, opened without following symbolic links. A share's directory
// holds what its writers put there (a job's processes, where the share is linked instead of
// mounted, can make links to anywhere), so the File REST API reaches its files only through
// openat2 with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV: a link in place of a file
// or of one of its directories (or a mount inside the share) answers ELOOP (or EXDEV), never what
// it leads to.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <filesystem>
#include <string>
#include <utility>

namespace bai::storage {

// A descriptor closed when it goes.
class ShareFd {
public:
    ShareFd() = default;
    explicit ShareFd(int fd) : fd_(fd) {}
    ShareFd(ShareFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
    ShareFd& operator=(ShareFd&& other) noexcept;
    ShareFd(const ShareFd&) = delete;
    ShareFd& operator=(const ShareFd&) = delete;
    ~ShareFd();
    int get() const { return fd_; }
    int release() { return std::exchange(fd_, -1); }
    explicit operator bool() const { return fd_ >= 0; }

private:
    int fd_ = -1;
};

// Opens `relative` ("" for the share's directory itself) under `root` with `flags` (O_CLOEXEC
// added) and `mode`. On failure the descriptor is empty and errno says why.
ShareFd open_in_share(const std::filesystem::path& root, const std::string& relative, int flags, mode_t mode = 0);

// The regular file at `relative`, looked at (O_PATH) before it is opened with `flags` (O_NOCTTY
// and O_CLOEXEC added): anything else (a device, a fifo, a directory) fails with ELOOP unopened.
ShareFd open_regular_in_share(const std::filesystem::path& root, const std::string& relative, int flags);

// The directory that holds `relative` (opened O_PATH | O_DIRECTORY as above) and the last name of
// `relative`, for the *at() calls that create, rename and remove it.
struct ShareParent {
    ShareFd dir;
    std::string name;
};
ShareParent parent_in_share(const std::filesystem::path& root, const std::string& relative);

// Removes the name `relative` (unlinkat with `flags`: 0, or AT_REMOVEDIR): a link there goes
// itself, never what it leads to; nothing happens when its directory cannot be reached.
void remove_in_share(const std::filesystem::path& root, const std::string& relative, int flags);

// Removes `relative` and, when it is a directory, everything in it: every directory opened beneath
// `root` with no link followed and entered only on the same filesystem (a mount inside is left,
// and the removal fails there), every name removed relative to its directory's descriptor, so
// that no link a writer makes meanwhile leads the removal elsewhere. False, with errno, when
// something could not be removed.
bool remove_tree_in_share(const std::filesystem::path& root, const std::string& relative);

// lstat(2) of `relative` ("" for the share's directory) through directories that are no links.
bool stat_in_share(const std::filesystem::path& root, const std::string& relative, struct stat& st);

// Whether errno after one of the calls above means "a link, or a file where a directory was
// expected, is in the way": the path is not share content.
bool not_share_content(int error);

}  // namespace bai::storage
