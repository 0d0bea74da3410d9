// What a node does when it joins its cluster (batchai-api.md §6): its directories, the cluster's
// volumes under AZ_BATCHAI_MOUNT_ROOT, then the setup task as root through bash, its output in
// {stdOutErrPathPrefix}/{stdOutErrPathSuffix}/stdout-{nodeId}.txt and stderr-{nodeId}.txt.
// Runs on a thread of its own; a failure makes the node unusable.
#pragma once

#include <string>

#include "emulator/engine/cluster_spec.h"
#include "emulator/engine/node.h"
#include "emulator/engine/run_control.h"
#include "fake_storage/engine/file_store.h"

namespace bai::engine {

struct NodeSetupResult {
    bool usable = true;
    std::string error_code;  // for the cluster's errors when not usable
    std::string message;
};

NodeSetupResult set_up_node(const Node& node, const ClusterSpec& spec, storage::FileStore& files, RunControl& control);

// The environment every process on a node starts from: PATH, HOME, locale and user of the
// emulator's own environment, nothing else of it.
Environment node_base_environment();

}  // namespace bai::engine
