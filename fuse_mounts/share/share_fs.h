// An Azure file share as a FUSE filesystem (libfuse3 low-level API, served by a pool of threads),
// straight over the share's directory in the store: reads and writes go to the same files the
// File REST API serves, and every change made through the mount is written into the store's index
// as it happens (FileStore::adopt_entry), so the REST API sees a file's new size, ETag and
// Last-Modified as soon as the write returns. The kernel caches entries and attributes for a
// second, and the mount invalidates them whenever the store publishes a change made elsewhere
// (REST, the engine, another mount of the share); pages are dropped at open and when a file's
// mtime changes. So what REST writes is what the next access through the mount sees.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "fake_storage/engine/file_store.h"
#include "fuse_mounts/common/mount_faults.h"

namespace bai::mounts {

struct ShareFsOptions {
    bool read_only = false;
    // The permission bits every file and directory shows (SMB mounts' file_mode/dir_mode).
    unsigned file_mode = 0777;
    unsigned dir_mode = 0777;
    MountFaults* faults = nullptr;  // consulted by every counted operation when set
    // Files opened while no fault plan waits are read and written by the kernel itself (FUSE
    // passthrough, where the kernel offers it): as fast as the disk, but their reads and writes no
    // longer reach the mount, so a plan set later does not fail them.
    bool passthrough = true;
};

class ShareFs {
public:
    ShareFs(storage::FileStore& files, std::string account, std::string share, ShareFsOptions options = {});
    // A plain directory served the same way, without an index (a file server's export, shown in
    // /proc/mounts as `name`, type fuse.bai-export). Faults are not injected there.
    ShareFs(std::filesystem::path directory, std::string name, ShareFsOptions options = {});
    ~ShareFs();
    ShareFs(const ShareFs&) = delete;
    ShareFs& operator=(const ShareFs&) = delete;

    // Mounts the share at `mountpoint` (an existing empty directory) and serves it until
    // unmount(). Throws std::runtime_error with the reason when it cannot.
    void mount(const std::filesystem::path& mountpoint);
    // Unmounts and stops serving; processes that still hold files of the mount get ENOTCONN
    // (the connection is aborted through fusectl, which is mounted if it is not), except on
    // passed-through files, which they read and write in the share's directory until they close them.
    void unmount();
    // Whether the kernel accepted passthrough for this mount (options.passthrough and Linux 6.9+).
    bool passes_through() const;

    struct State;

private:
    std::unique_ptr<State> state_;
};

}  // namespace bai::mounts
