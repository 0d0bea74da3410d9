// The programs of the emulator's that run on a Slurm cluster's hosts (bai-blobfuse, bai-sharefuse),
// put where every host finds them: DIR/bin of the data directory, which the hosts share.
#pragma once

#include <filesystem>
#include <string>

namespace bai::daemon {

// Copies the program `name` from beside this executable (or from the build tree's fuse_mounts/)
// to location/bin/NAME and returns that path; "" (with `why` set) when it is not found or cannot
// be copied.
std::filesystem::path publish_host_program(const std::filesystem::path& location, const std::string& name,
                                           std::string& why);

}  // namespace bai::daemon
