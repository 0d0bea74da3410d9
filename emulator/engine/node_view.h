// The paths of a job on one node as its processes see them, and the directories of this machine
// behind them. On the host they are the node's real directories. In a container (sandbox or
// docker) they are the service's: AZ_BATCHAI_MOUNT_ROOT is /mnt/batch/tasks/shared/LS_root/mounts,
// the job's temp /mnt/batch/tasks/shared/LS_root/jobs/<job>, each bound to the node's directory.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "emulator/engine/job_environment.h"
#include "emulator/engine/sandbox.h"

namespace bai::engine {

struct NodeDirectories {
    std::filesystem::path node_root;   // mounts/, jobs/, tmp/
    std::string job_name;              // the job's directory is node_root/jobs/<job_name>
    std::filesystem::path shared_dir;  // shared by the job's nodes
    // relativeMountPath and the directory behind it, for the cluster's and the job's volumes.
    std::vector<std::pair<std::string, std::filesystem::path>> cluster_volumes;
    std::vector<std::pair<std::string, std::filesystem::path>> job_volumes;
};

struct NodeView {
    NodePaths paths;
    std::string job_dir;  // AZ_BATCHAI_JOB_TEMP: where the processes start
    // In a container: where each path the job sees lies on this machine, parents first. Empty on
    // the host, where both are the same.
    std::vector<SandboxBind> binds;

    // The directory of this machine for a path the job sees; nullopt when the path lies in no
    // bind (a container's own files).
    std::optional<std::filesystem::path> to_host(const std::string& path) const;
};

// `path` moved from under `from` to under `to` (lexically); nullopt when it does not lie in `from`.
std::optional<std::filesystem::path> rebase(const std::filesystem::path& path, const std::filesystem::path& from,
                                            const std::filesystem::path& to);

NodeView host_view(const NodeDirectories& dirs);
NodeView container_view(const NodeDirectories& dirs);

}  // namespace bai::engine
