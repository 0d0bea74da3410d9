// Volumes on a node's host that sees this machine's disk (a shared filesystem) but not its mounts:
// a Slurm host. Shares and file servers are links there (MountSettings::link_shares); an unmanaged
// file system's mountCommand runs on the host (a step; unmounted there at release); a blob
// container is mounted here too, checked on the host, and where the host does not see it, mounted by
// bai-blobfuse (fuse_mounts/remote/) through the Blob REST API, as blobfuse mounted one on a
// Batch AI node: a step of the node's host allocation that lives until the volumes are released,
// with a SAS for that container alone in a file of the node's (0600). The emulator's change feed
// keeps that mount's caches coherent with REST (blob_rest_container.h). Where the hosts do not see
// the store's directories either (MountSettings::remote_shares), a file share is mounted there the
// same way by bai-sharefuse through the File REST API.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "emulator/arm/mount_volumes.h"
#include "emulator/engine/storage_access.h"
#include "emulator/engine/volume_links.h"

namespace bai::engine {

class NodeHosts;

// After attach_volumes(root, volumes, ...): makes the node's host show what `attached` shows here.
// `step` names the steps it starts (unique on the node: "bai-node-" for the node's own volumes,
// which the end of a job leaves running); `scratch` is a directory of the node's on the shared
// filesystem. Returns "" when every volume is there, else why not, naming the mount point.
std::string attach_on_host(NodeHosts& hosts, const std::string& node_id, const std::string& step,
                           const std::filesystem::path& root, const std::vector<arm::Volume>& volumes,
                           const StorageAccess& storage, const std::filesystem::path& scratch,
                           AttachedVolumes& attached);

}  // namespace bai::engine
