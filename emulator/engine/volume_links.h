// How mounted volumes appear on an emulated node until fuse_mounts serves them: a file share is a
// symbolic link to its directory in the store (DIR/storage/ACCOUNT/shares/SHARE), a blob
// container a directory of the node's own. Files a job writes into a share join the store's
// index through adopt_share_writes().
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "emulator/arm/mount_volumes.h"
#include "fake_storage/engine/file_store.h"

namespace bai::engine {

// Makes each volume appear at root/relativeMountPath: a share as a link to its directory, or, with
// `links` false (a container binds the share there), as an empty directory. Throws
// std::runtime_error naming the volume when its share does not exist or the link cannot be made;
// `notes` gets a line per volume.
void attach_volumes(const std::filesystem::path& root, const std::vector<arm::Volume>& volumes,
                    storage::FileStore& files, std::vector<std::string>& notes, bool links = true);

// The directory of this machine that holds the volume attached under `root`: the share's in the
// store, or the blob container's local directory.
std::filesystem::path volume_directory(const arm::Volume& volume, const std::filesystem::path& root,
                                       storage::FileStore& files);

// For each directory that (through the links) lies in a share of the store: brings the share's
// index up to what is on disk there.
void adopt_share_writes(storage::FileStore& files, const std::vector<std::filesystem::path>& directories);

}  // namespace bai::engine
