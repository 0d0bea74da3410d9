// The programs of the emulator's that run on a Slurm cluster's hosts (bai-blobfuse), put where
// every host finds them: DIR/bin of the data directory, which the hosts share.
#pragma once

#include <filesystem>
#include <string>

namespace bai::daemon {

// Copies bai-blobfuse from beside this executable (or from the build tree's fuse_mounts/) to
// location/bin/bai-blobfuse and returns that path; "" (with `why` set) when it is not found or
// cannot be copied.
std::filesystem::path publish_blobfuse(const std::filesystem::path& location, std::string& why);

}  // namespace bai::daemon
