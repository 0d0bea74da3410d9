// How mounted volumes appear on an emulated node: a file share is FUSE-mounted from the store
// (fuse_mounts/share/share_fs.h), or, where this machine cannot mount FUSE (not root, no
// /dev/fuse), a symbolic link to its directory in the store (DIR/storage/ACCOUNT/shares/SHARE);
// a blob container is a directory of the node's own (until the blob filesystem lands). Files a
// job writes through a link join the store's index through adopt_share_writes().
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "emulator/arm/mount_volumes.h"
#include "fake_storage/engine/file_store.h"
#include "fuse_mounts/share/share_fs.h"

namespace bai::engine {

// The volumes attached under one root (a node's mount root, a job's), released together.
class AttachedVolumes {
public:
    // `faults`: what the shares mounted here consult (scenarios' injected faults); may be null.
    explicit AttachedVolumes(mounts::MountFaults* faults = nullptr) : faults_(faults) {}
    ~AttachedVolumes() { release(); }
    AttachedVolumes(const AttachedVolumes&) = delete;
    AttachedVolumes& operator=(const AttachedVolumes&) = delete;

    // Unmounts the shares mounted (processes still inside lose them).
    void release();

    // relativeMountPath and the directory of this machine that holds the volume: the mount point
    // of a mounted share, the store's directory of a linked one, a blob container's directory.
    std::vector<std::pair<std::string, std::filesystem::path>> directories;
    std::vector<std::unique_ptr<mounts::ShareFs>> mounts;
    mounts::MountFaults* faults() const { return faults_; }

private:
    mounts::MountFaults* faults_;
};

// Makes each volume appear at root/relativeMountPath: a share mounted, else linked (with `links`
// false, for a container that binds the share's directory there: an empty directory). Throws
// std::runtime_error naming the volume when its share does not exist or it cannot be attached;
// `notes` gets a line per volume.
void attach_volumes(const std::filesystem::path& root, const std::vector<arm::Volume>& volumes,
                    storage::FileStore& files, std::vector<std::string>& notes, AttachedVolumes& attached,
                    bool links = true);

// For each directory that (through the links) lies in a share of the store: brings the share's
// index up to what is on disk there.
void adopt_share_writes(storage::FileStore& files, const std::vector<std::filesystem::path>& directories);

}  // namespace bai::engine
