// What a node does when it joins its cluster (batchai-api.md §6): its directories, the cluster's
// volumes under AZ_BATCHAI_MOUNT_ROOT, then the setup task as root through bash, its output in
// {stdOutErrPathPrefix}/{stdOutErrPathSuffix}/stdout-{nodeId}.txt and stderr-{nodeId}.txt.
// Runs on a thread of its own; a failure makes the node unusable.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "emulator/engine/cluster_spec.h"
#include "emulator/engine/node.h"
#include "emulator/engine/node_hosts.h"
#include "emulator/engine/run_control.h"
#include "emulator/engine/volume_links.h"
#include "emulator/engine/storage_access.h"

namespace bai::engine {

struct NodeSetupResult {
    bool usable = true;
    std::string error_code;  // for the cluster's errors when not usable
    std::string message;
};

// The cluster's volumes are attached into `volumes`, which the node keeps for its life.
NodeSetupResult set_up_node(const Node& node, const ClusterSpec& spec, const StorageAccess& storage, RunControl& control,
                            AttachedVolumes& volumes);

// The environment every process on a node starts from: PATH, HOME, locale and user of the
// emulator's own environment, nothing else of it, and TMPDIR, the node's own temporary directory
// (node_root/tmp, made here) when a node is given: nodes share one machine, and programs such as
// OpenMPI's daemons keep per-host state under TMPDIR that two nodes must not share.
Environment node_base_environment(const std::filesystem::path& node_root = {});

}  // namespace bai::engine
