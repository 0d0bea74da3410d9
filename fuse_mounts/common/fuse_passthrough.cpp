#define FUSE_USE_VERSION 312
#include "fuse_mounts/common/fuse_passthrough.h"

#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <shared_mutex>

namespace bai::mounts {
namespace {

// The kernel's FUSE ABI (include/uapi/linux/fuse.h, 7.40): only what the channel reads or patches.
// Debian 12's headers (Linux 6.1) predate passthrough.
constexpr std::uint32_t kOpcodeOpen = 14;
constexpr std::uint32_t kOpcodeInit = 26;
constexpr std::uint32_t kOpcodeCreate = 35;
constexpr std::uint32_t kInitExt = 1u << 30;          // FUSE_INIT_EXT: flags2 is meaningful
constexpr std::uint32_t kPassthroughFlag2 = 1u << 5;  // FUSE_PASSTHROUGH (1 << 37) in flags2
constexpr std::uint32_t kOpenPassthrough = 1u << 7;   // FOPEN_PASSTHROUGH

struct InHeader {
    std::uint32_t len, opcode;
    std::uint64_t unique, nodeid;
    std::uint32_t uid, gid, pid;
    std::uint16_t total_extlen, padding;
};
struct InitIn {
    std::uint32_t major, minor, max_readahead, flags, flags2;
};
struct OutHeader {
    std::uint32_t len;
    std::int32_t error;
    std::uint64_t unique;
};
struct InitOut {
    std::uint32_t major, minor, max_readahead, flags;
    std::uint16_t max_background, congestion_threshold;
    std::uint32_t max_write, time_gran;
    std::uint16_t max_pages, map_alignment;
    std::uint32_t flags2, max_stack_depth;
};
struct OpenOut {
    std::uint64_t fh;
    std::uint32_t open_flags;
    std::int32_t backing_id;
};
struct BackingMap {
    std::int32_t fd;
    std::uint32_t flags;
    std::uint64_t padding;
};
static_assert(sizeof(InHeader) == 40 && sizeof(OutHeader) == 16 && sizeof(InitOut) == 40 && sizeof(OpenOut) == 16);

constexpr unsigned long kBackingOpen = _IOW(229, 1, BackingMap);
constexpr unsigned long kBackingClose = _IOW(229, 2, std::uint32_t);

// The channels by /dev/fuse descriptor: libfuse hands its custom I/O the session's userdata (the
// filesystem's), not ours.
std::shared_mutex registry_mutex;
std::map<int, PassthroughChannel*> registry;

}  // namespace

struct PassthroughIo {
    static ssize_t read(int fd, void* buf, size_t len, void*) {
        PassthroughChannel* channel = PassthroughChannel::of(fd);
        return channel ? channel->read(fd, buf, len) : ::read(fd, buf, len);
    }
    static ssize_t writev(int fd, iovec* iov, int count, void*) {
        PassthroughChannel* channel = PassthroughChannel::of(fd);
        return channel ? channel->writev(fd, iov, count) : ::writev(fd, iov, count);
    }
    static ssize_t splice_send(int fdin, off_t* offin, int fdout, off_t* offout, size_t len, unsigned flags, void*) {
        return ::splice(fdin, offin, fdout, offout, len, flags);
    }
};

std::unique_ptr<PassthroughChannel> PassthroughChannel::install(fuse_session* session) {
    const int fd = fuse_session_fd(session);
    std::unique_ptr<PassthroughChannel> channel(new PassthroughChannel(fd));
    {
        std::unique_lock lock(registry_mutex);
        registry[fd] = channel.get();
    }
    static const fuse_custom_io io{PassthroughIo::writev, PassthroughIo::read, nullptr, PassthroughIo::splice_send};
    if (fuse_session_custom_io(session, &io, fd) != 0) return nullptr;  // the destructor unregisters
    return channel;
}

PassthroughChannel::~PassthroughChannel() {
    std::unique_lock lock(registry_mutex);
    if (auto it = registry.find(fd_); it != registry.end() && it->second == this) registry.erase(it);
}

PassthroughChannel* PassthroughChannel::of(int fd) {
    std::shared_lock lock(registry_mutex);
    auto it = registry.find(fd);
    return it == registry.end() ? nullptr : it->second;
}

ssize_t PassthroughChannel::read(int fd, void* buf, size_t len) {
    const ssize_t n = ::read(fd, buf, len);
    if (n < static_cast<ssize_t>(sizeof(InHeader))) return n;
    InHeader header;
    std::memcpy(&header, buf, sizeof header);
    if (header.opcode == kOpcodeInit && n >= static_cast<ssize_t>(sizeof(InHeader) + sizeof(InitIn))) {
        InitIn init;
        std::memcpy(&init, static_cast<char*>(buf) + sizeof(InHeader), sizeof init);
        offered_ = (init.flags & kInitExt) && (init.flags2 & kPassthroughFlag2);
        init_unique_ = header.unique;
    } else if ((header.opcode == kOpcodeOpen || header.opcode == kOpcodeCreate) && enabled()) {
        std::lock_guard guard(mutex_);
        pending_opens_.insert(header.unique);
    }
    return n;
}

ssize_t PassthroughChannel::writev(int fd, iovec* iov, int count) {
    if (count >= 2 && iov[0].iov_len == sizeof(OutHeader)) {
        OutHeader header;
        std::memcpy(&header, iov[0].iov_base, sizeof header);
        if (header.unique != 0 && header.unique == init_unique_.load() && offered_ && header.error == 0 &&
            iov[1].iov_len >= sizeof(InitOut)) {
            InitOut init;
            std::memcpy(&init, iov[1].iov_base, sizeof init);
            init.flags |= kInitExt;
            init.flags2 |= kPassthroughFlag2;
            init.max_stack_depth = 1;  // backing files on a filesystem that stacks on nothing
            std::memcpy(iov[1].iov_base, &init, sizeof init);
            enabled_ = true;
        } else if (header.unique != 0 && enabled()) {
            std::lock_guard guard(mutex_);
            if (pending_opens_.erase(header.unique) && header.error == 0) {
                iovec& last = iov[count - 1];
                if (last.iov_len >= sizeof(OpenOut)) {
                    char* at = static_cast<char*>(last.iov_base) + last.iov_len - sizeof(OpenOut);
                    OpenOut open;
                    std::memcpy(&open, at, sizeof open);
                    if (auto it = backing_of_fh_.find(open.fh); it != backing_of_fh_.end()) {
                        open.open_flags |= kOpenPassthrough;
                        open.backing_id = it->second;
                        std::memcpy(at, &open, sizeof open);
                        backing_of_fh_.erase(it);
                    }
                }
            }
        }
    }
    return ::writev(fd, iov, count);
}

int PassthroughChannel::open_backing(int fd) {
    BackingMap map{fd, 0, 0};
    const int id = ::ioctl(fd_, kBackingOpen, &map);
    return id > 0 ? id : -(id < 0 ? errno : EINVAL);
}

void PassthroughChannel::close_backing(int backing_id) {
    std::uint32_t id = static_cast<std::uint32_t>(backing_id);
    ::ioctl(fd_, kBackingClose, &id);
}

bool PassthroughChannel::can_back_files_in(const std::string& directory) {
    const int fd = ::open(directory.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) return true;  // no nameless files there: the first open will tell
    const int id = open_backing(fd);
    ::close(fd);
    if (id < 0) return false;
    close_backing(id);
    return true;
}

void PassthroughChannel::pass_through(std::uint64_t fh, int backing_id) {
    std::lock_guard guard(mutex_);
    backing_of_fh_[fh] = backing_id;
}

void PassthroughChannel::cancel(std::uint64_t fh) {
    std::lock_guard guard(mutex_);
    backing_of_fh_.erase(fh);
}

}  // namespace bai::mounts
