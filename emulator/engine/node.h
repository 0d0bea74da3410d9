// An emulated VM of a cluster: its id, loopback address, root directory and GPUs, and where it
// is in its life (the states of the cluster's nodeStateCounts).
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace bai::engine {

class NodeHosts;

enum class NodeState { preparing, idle, running, leaving, unusable };

struct Node {
    std::string id;          // "tvm-<cluster hash>_<n>-<yyyymmddthhmmssz>", as the service named them
    std::string address;     // 127.0.1.N
    std::string cluster_key;
    std::filesystem::path root;  // DIR/nodes/CLUSTER/NODE
    std::vector<std::string> gpus;  // UUIDs, owned by this node while it exists
    std::vector<std::string> gpu_devices;  // on a host: their device nodes there (HostGrant)
    bool low_priority = false;
    NodeState state = NodeState::preparing;
    std::string job_key;           // the job it runs (running, or leaving after it)
    bool remove_after_job = false;  // waitforjobcompletion: leaves when its job ends
    bool failed = false;            // a scenario failed it: unusable once its job is stopped
    // Where its processes run when not on this machine (node_hosts.h: a Slurm allocation); null:
    // here, as always.
    std::shared_ptr<NodeHosts> hosts;

    std::filesystem::path mount_root() const { return root / "mounts"; }
    std::filesystem::path jobs_root() const { return root / "jobs"; }
};

const char* state_name(NodeState state);

}  // namespace bai::engine
