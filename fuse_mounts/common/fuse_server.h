// One FUSE filesystem served by this process: a libfuse3 low-level session mounted at a directory
// and served by a pool of threads until stop(). The share and blob filesystems bring their
// operations; this brings the mount, the loop, and the unmount that frees whoever still waits.
#pragma once

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "fuse_mounts/common/fuse_passthrough.h"

struct fuse_lowlevel_ops;
struct fuse_session;

namespace bai::mounts {

struct FuseMountSpec {
    std::string fsname;   // what /proc/mounts shows as the source (ACCOUNT/SHARE)
    std::string subtype;  // the type is fuse.<subtype>; "bai-*" marks this emulator's mounts
    bool read_only = false;
    // Offer the kernel FUSE passthrough (see fuse_passthrough.h); files still opt in one by one.
    bool passthrough = false;
    // The kernel checks the modes and owners it caches (-o default_permissions). Off where every
    // entry shows 0777 (a blob container): there it checks nothing the mount's read-only flag
    // does not, and costs a GETATTR of a directory after each change in it (its attributes,
    // invalidated by the change, are needed to walk through it).
    bool kernel_permissions = true;
};

class FuseServer {
public:
    FuseServer() = default;
    ~FuseServer() { stop(); }
    FuseServer(const FuseServer&) = delete;
    FuseServer& operator=(const FuseServer&) = delete;

    // Mounts at `mountpoint` (an existing directory) and serves `ops` with `userdata` as the
    // requests' userdata. Throws std::runtime_error with the reason when it cannot.
    void start(const fuse_lowlevel_ops& ops, void* userdata, const std::filesystem::path& mountpoint,
               const FuseMountSpec& spec);
    // Stops serving: the loop is told to exit, the mount detached and the connection aborted
    // through fusectl (processes still holding files of it get ENOTCONN instead of keeping the
    // serving threads, and notifications fail at once); the session stays until stop().
    void interrupt();
    // interrupt(), then the session's descriptor is closed and the session destroyed.
    void stop();
    bool running() const { return session_ != nullptr; }
    // Whether the loop has ended by itself (the mount was unmounted from outside: fusermount -u).
    bool ended() const;
    // For notifications to the kernel (fuse_lowlevel_notify_*): valid until stop().
    fuse_session* session() const { return session_; }
    const std::filesystem::path& mountpoint() const { return mountpoint_; }
    // The passthrough channel once the kernel accepted passthrough; null otherwise.
    PassthroughChannel* passthrough() const { return channel_ && channel_->enabled() ? channel_.get() : nullptr; }

private:
    fuse_session* session_ = nullptr;
    std::unique_ptr<PassthroughChannel> channel_;
    std::thread loop_;
    std::filesystem::path mountpoint_;
    unsigned connection_ = 0;
    bool interrupted_ = false;
    std::atomic<bool> loop_ended_{false};  // the kernel's id of the connection (the mount's minor device number)
};

}  // namespace bai::mounts
