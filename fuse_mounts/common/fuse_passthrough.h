// FUSE passthrough (Linux 6.9+) for a libfuse 3.14 session, which cannot ask for it itself (3.16
// can): the session's reads and writes of /dev/fuse go through this channel, which offers
// FUSE_PASSTHROUGH in the INIT reply when the kernel does, and marks the open replies of the files
// a filesystem chose with FOPEN_PASSTHROUGH and their backing id. The kernel then reads and writes
// those files' backing files itself: no request, no copy through the daemon.
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

struct fuse_session;

namespace bai::mounts {

class PassthroughChannel {
public:
    // Takes over the I/O of `session` (mounted, not yet served) on its descriptor.
    static std::unique_ptr<PassthroughChannel> install(fuse_session* session);
    ~PassthroughChannel();
    PassthroughChannel(const PassthroughChannel&) = delete;
    PassthroughChannel& operator=(const PassthroughChannel&) = delete;

    // Whether the kernel accepted passthrough at INIT (false until then, and on older kernels).
    bool enabled() const { return enabled_.load(std::memory_order_acquire); }
    // Registers `fd` (a regular file opened for the kernel's file) as a backing file: its id, or
    // a negative errno (EPERM without CAP_SYS_ADMIN).
    int open_backing(int fd);
    void close_backing(int backing_id);
    // Whether files in `directory` can back passed-through files (a nameless file made there is
    // registered and let go): the ioctl wants CAP_SYS_ADMIN, and a filesystem may refuse.
    bool can_back_files_in(const std::string& directory);
    // The open (or create) reply about to be sent with file handle `fh` asks for passthrough to
    // `backing_id`.
    void pass_through(std::uint64_t fh, int backing_id);
    // Takes back pass_through(fh) when the reply could not be sent.
    void cancel(std::uint64_t fh);

private:
    explicit PassthroughChannel(int fd) : fd_(fd) {}
    ssize_t read(int fd, void* buf, size_t len);
    ssize_t writev(int fd, iovec* iov, int count);
    static PassthroughChannel* of(int fd);

    const int fd_;
    std::atomic<bool> offered_{false};
    std::atomic<bool> enabled_{false};
    std::atomic<std::uint64_t> init_unique_{0};
    std::mutex mutex_;
    std::set<std::uint64_t> pending_opens_;      // requests (unique) of OPEN and CREATE not answered yet
    std::map<std::uint64_t, int> backing_of_fh_;  // replies to mark, by file handle

    friend struct PassthroughIo;
};

}  // namespace bai::mounts
