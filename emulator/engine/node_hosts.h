// Where a node's processes run when it is not this machine: a host that another system gives
// the node for its life (slurm_hosts.h: a Slurm allocation). The engine asks for a host while the
// node prepares, puts every process of the node there (a prefix to its command line), kills what
// a job left there when it ends, gives the host back when the node leaves, and hears when the
// host is taken away (pre-empted, failed, released by someone else). Without one (the default)
// nodes are directories of this machine, as always (slurm.md).
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "emulator/engine/cluster_spec.h"
#include "emulator/engine/node.h"
#include "emulator/engine/run_control.h"

namespace bai::engine {

// What the host system says of a node it had given and took away.
enum class HostLoss {
    preempted,  // the node is pre-empted: its job requeued, a new node in its place
    failed,     // the host failed: the node is unusable, its job requeued
    released,   // the host was given back by someone else: the node leaves, its job requeued
};

// A host given to a node: its address, and the GPUs the host system gave it there.
struct HostGrant {
    std::string address;
    std::vector<std::string> gpus;  // UUIDs
    std::vector<std::string> gpu_devices;  // their device nodes on the host (/dev/nvidiaN), where known
};

// The names of the steps that serve the node itself (its volumes on the host), not a job.
inline constexpr const char* kNodeStepPrefix = "bai-node-";

class NodeHosts {
public:
    virtual ~NodeHosts() = default;

    // Cancels what a previous run of this data directory left held, and starts watching.
    virtual void start() = 0;
    // Gives back every host, and stops watching.
    virtual void stop() = 0;

    // Blocks until the node has a host (its address and GPUs), `control` is cancelled (nullopt:
    // nothing is left held), or the host system refuses or ends it first, or its GPUs cannot be
    // read there (std::runtime_error saying why).
    virtual std::optional<HostGrant> acquire(const Node& node, const ClusterSpec& spec, RunControl& control) = 0;
    // The arguments put before a command to run it on the node's host as `step` (a name of its
    // own, unique on the node), in `cwd`. Throws std::runtime_error when the node has no host.
    virtual std::vector<std::string> launch_prefix(const std::string& node_id, const std::string& step,
                                                   const std::filesystem::path& cwd) = 0;
    // Asks the host system now whether the node still has its host: nullopt when it has, else how
    // it lost it. A job whose processes failed asks before it says so: a host taken away kills
    // them before the host system's notice arrives (its job is then requeued, not failed).
    virtual std::optional<HostLoss> lost(const std::string& node_id) = 0;
    // Kills whatever still runs on the node's host (a job's processes once the job is over),
    // except the steps named kNodeStepPrefix..., which live as long as the node.
    virtual void kill_processes(const std::string& node_id) = 0;
    // Gives the node's host back (nothing happens when it has none).
    virtual void release(const std::string& node_id) = 0;

    // Whether the hosts see this machine's data directory at the same path (a shared filesystem).
    // When they do not (--slurm-storage rest), what a node's processes need of it there (its
    // directories, scripts, the programs that mount volumes) is copied to its host.
    virtual bool shares_disk() const { return true; }
    // Copies `paths` of this machine to the same paths on the node's host: a directory as itself
    // (not what it holds), a file or link as it is, modes kept, missing parents made. Nothing
    // happens where the hosts share the disk. Throws std::runtime_error saying why it could not.
    virtual void copy_to_host(const std::string& /*node_id*/, const std::vector<std::filesystem::path>& /*paths*/) {}
    // Removes `path` and what it holds on the node's host (not across mounts), where the hosts do
    // not share the disk: the node's directory when it leaves. Failures are logged, not thrown.
    virtual void remove_from_host(const std::string& /*node_id*/, const std::filesystem::path& /*path*/) {}

    // Where the node is, for people (the node listing, the portal): the host's name and the host
    // system's id of what holds it (a Slurm job); nullopt while it has no host.
    struct Placement {
        std::string host;
        std::string allocation;
    };
    virtual std::optional<Placement> placement(const std::string& node_id) const = 0;

    // Set by the engine before start(): called once for each host that was given and is taken
    // away, on the hosts' own thread, or on the thread whose lost() found it first (before lost()
    // returns). It must not call back into this object.
    std::function<void(const std::string& node_id, HostLoss loss, const std::string& why)> on_loss;
};

}  // namespace bai::engine
