// How mounted volumes appear on an emulated node. A file share is FUSE-mounted from the store
// (fuse_mounts/share/share_fs.h), or bind-mounted from its directory in the store
// (MountSettings::bind_shares), or, for nodes on other hosts (MountSettings::link_shares) and
// where this machine cannot mount FUSE (not root, no /dev/fuse), a symbolic link to its directory
// in the store (DIR/storage/ACCOUNT/shares/SHARE);
// files a job writes through a link join the store's index through adopt_share_writes(). A blob
// container is FUSE-mounted (fuse_mounts/blob/blob_fs.h), or without FUSE an empty directory of
// the node's own. A file server's export is its directory served through FUSE (or linked). An
// unmanaged file system is whatever its mountCommand mounts.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "emulator/arm/mount_volumes.h"
#include "emulator/engine/process.h"
#include "emulator/engine/storage_access.h"
#include "fuse_mounts/blob/blob_fs.h"
#include "fuse_mounts/share/share_fs.h"

namespace bai::engine {

// How volumes are mounted.
struct MountSettings {
    mounts::MountFaults* faults = nullptr;  // what the mounts consult (scenarios' injected faults)
    bool passthrough = true;                // shares: FUSE passthrough where the kernel has it
    // Shares bind-mounted from their directory in the store instead of served through FUSE
    // (--share-mounts bind): the disk's speed for small files; the store follows what is written
    // there when REST reads it. Not for shares with a fileMode or directoryMode other than 0777
    // (a bind mount shows the files' own modes): those stay FUSE mounts.
    bool bind_shares = false;
    // The volumes are used on other machines that see this one's disk at the same paths (a
    // shared filesystem: nodes on Slurm hosts) but not the mounts made here: shares and file
    // servers are symbolic links to their directories (a share's writes followed by the store as
    // a bind mount's are; the files show their own modes, whatever fileMode says); what only a
    // mount can show is the caller's to bring to the host (host_volumes.h): blob containers are
    // mounted here too, unmanaged file systems' mountCommands run on the host alone.
    bool link_shares = false;
    // With link_shares: the hosts do not see the store's directories either (--slurm-storage
    // rest): a share's mount point here is an empty directory, and the share is mounted on the
    // host by bai-sharefuse through the File REST API (host_volumes.h); the store still follows
    // what this machine writes into the share's directory (a job's logs) for REST to see.
    bool remote_shares = false;
};

// The volumes attached under one root (a node's mount root, a job's), released together.
class AttachedVolumes {
public:
    explicit AttachedVolumes(MountSettings settings = {}) : settings_(settings) {}
    ~AttachedVolumes() { release(); }
    AttachedVolumes(const AttachedVolumes&) = delete;
    AttachedVolumes& operator=(const AttachedVolumes&) = delete;

    // Unmounts what was mounted (processes still inside lose it).
    void release();
    // Ends what serves the volumes on the node's host (host_mounts) alone.
    void release_on_hosts();

    // relativeMountPath and the directory of this machine that holds the volume: the mount point
    // of a mounted volume, the store's directory of a linked share, a file server's export.
    std::vector<std::pair<std::string, std::filesystem::path>> directories;
    std::vector<std::unique_ptr<mounts::ShareFs>> mounts;  // shares and file servers
    std::vector<std::unique_ptr<mounts::BlobFs>> blob_mounts;
    std::vector<std::filesystem::path> command_mounts;  // where mountCommands (and bind mounts) mounted
    std::vector<std::shared_ptr<void>> disk_followers;  // FileStore::follow_disk_writes of bound shares
    // What serves a volume on the node's host (bai-blobfuse's steps, host_volumes.h): at release,
    // `unmount` unmounts it there (the program then ends by itself; a signal to the step's srun
    // would have Slurm kill it before it unmounts), and the process is waited for.
    struct HostMount {
        std::unique_ptr<Process> process;  // null where nothing stays running (a mountCommand's mount)
        std::function<bool()> unmount;  // false: it could not (then the process is signalled)
    };
    std::vector<HostMount> host_mounts;
    const MountSettings& settings() const { return settings_; }

private:
    MountSettings settings_;
};

// Makes each volume appear at root/relativeMountPath: mounted, else linked (with `links` false, for
// a container that binds the volume's directory there: an empty directory). Throws
// std::runtime_error naming the volume when its share, container or file server does not exist,
// its mountOptions are refused, its mountCommand fails, or it cannot be attached; `notes` gets a
// line per volume.
void attach_volumes(const std::filesystem::path& root, const std::vector<arm::Volume>& volumes,
                    const StorageAccess& storage, std::vector<std::string>& notes, AttachedVolumes& attached,
                    bool links = true);

// Where a volume's files lie on this machine outside any mount: a share's directory in the store,
// a file server's export (at its sourceDirectory); nullopt for blob containers and unmanaged file
// systems, which have no such directory. Throws as attach_volumes for a missing file server.
std::optional<std::filesystem::path> backing_directory(const arm::Volume& volume, const StorageAccess& storage);

// Each volume of `volumes` attached under `root` that has a backing directory: its mount point
// and that directory (a volume whose directory cannot be found is left out: attaching it failed).
using BackingDirectories = std::vector<std::pair<std::filesystem::path, std::filesystem::path>>;
BackingDirectories backing_directories(const std::filesystem::path& root, const std::vector<arm::Volume>& volumes,
                                       const StorageAccess& storage);
// Where this machine writes `path` itself: in the backing directory of the first mount point of
// `directories` it lies under (not through the mount, which may show nothing here), else `path`.
std::filesystem::path in_backing_directory(const std::filesystem::path& path, const BackingDirectories& directories);

// For each directory that (through the links) lies in a share of the store: brings the share's
// index up to what is on disk there.
void adopt_share_writes(storage::FileStore& files, const std::vector<std::filesystem::path>& directories);

}  // namespace bai::engine
