// A blob container as a FUSE filesystem, as blobfuse showed one, served from a BlobContainer: the
// store's BlobStore in this process, or the Blob REST API (libfuse3 low-level API, a pool of
// threads):
// - directories are virtual: a name "a/b/c" makes the directories a and a/b; an empty directory
//   is a zero-byte marker blob carrying the metadata hdi_isfolder=true (what mkdir creates);
// - a file opened for reading is a snapshot of the blob committed when it was opened;
// - a file opened for writing is staged in memory, or in an unnamed local file past 1 MiB (the
//   blob's bytes first, unless truncated), and committed as one whole blob (Put Blob) at each flush (close), fsync and
//   release: readers through the REST API see the old blob or the new one, never a part;
// - rename is copy then delete (a directory's: one blob at a time; not atomic), as in blobfuse;
// - the kernel caches entries and attributes; the container's change notifications invalidate them.
// The differences from POSIX are listed in fuse_mounts/README.md.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "fuse_mounts/blob/blob_container.h"
#include "fuse_mounts/common/mount_faults.h"

namespace bai::mounts {

struct BlobFsOptions {
    bool read_only = false;
    // The kernel's caches (blobfuse's -o attr_timeout, entry_timeout, negative_timeout, in
    // seconds; kernel_cache keeps a file's pages across opens). Every change the store makes
    // other than through this mount is invalidated in them (the REST API's before its call
    // answers), so these only bound what no one tells the kernel: a virtual directory's times,
    // negative entries at the root when the container itself is deleted or created.
    static constexpr double kDefaultCacheSeconds = 10;
    double attr_timeout = kDefaultCacheSeconds;
    double entry_timeout = kDefaultCacheSeconds;
    double negative_timeout = kDefaultCacheSeconds;
    bool kernel_cache = false;
    // Where files open for writing are staged (unnamed files: nothing stays after a crash).
    std::filesystem::path staging_dir;
    MountFaults* faults = nullptr;  // consulted by every counted operation when set
};

class BlobFs {
public:
    BlobFs(storage::BlobStore& blobs, storage::ContentFiles& content, std::string account, std::string container,
           BlobFsOptions options);
    BlobFs(std::unique_ptr<BlobContainer> container, BlobFsOptions options);
    ~BlobFs();
    BlobFs(const BlobFs&) = delete;
    BlobFs& operator=(const BlobFs&) = delete;

    // Mounts the container at `mountpoint` (an existing directory) and serves it until unmount().
    // Throws std::runtime_error with the reason when it cannot (no such container, no FUSE).
    void mount(const std::filesystem::path& mountpoint);
    // Commits what is still staged, then unmounts (as ShareFs::unmount).
    void unmount();
    // Whether the mount is served: false once unmounted, from outside (fusermount -u) too.
    bool serving() const;

    struct State;

private:
    std::unique_ptr<State> state_;
};

}  // namespace bai::mounts
