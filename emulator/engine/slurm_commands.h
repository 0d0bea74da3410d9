// The Slurm commands the emulator's nodes on Slurm are made of (slurm.md), built and read here
// without running anything: the holder job of a node (sbatch), the poll of this instance's
// holders (squeue), what a holder's Slurm state means for its node, the prefix that puts a
// process on a node's host as a job step (srun --overlap), and the cancel of a step or a holder.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "emulator/engine/slurm_sizes.h"

namespace bai::engine {

// What `--compute slurm` was given (or its config file).
struct SlurmSettings {
    std::string instance;                // names this data directory's holders (slurm_instance_id)
    std::string partition;               // --slurm-partition; "" for the cluster's default
    std::string account;                 // --slurm-account
    std::string lowpriority_partition;   // --slurm-partition-lowpriority (partition_prio pre-emption)
    std::string lowpriority_qos;         // --slurm-qos-lowpriority (qos pre-emption)
    std::filesystem::path log_dir;       // DIR/slurm: the holders' own output
    SizeMap sizes;                       // --slurm-size-map
    // The hosts see the data directory (false: --slurm-storage rest; the holders then write
    // their output nowhere and start in /).
    bool shares_disk = true;
    // The label value of this emulator's docker containers (docker_client.h's kOwnerLabel): what
    // a holder removes from its host's engine when its allocation ends (holder_script).
    std::string docker_owner;
};

// A node to hold: its id, its cluster, its size as Slurm asks for it.
struct HolderAsk {
    std::string node_id;
    std::string cluster_key;
    int cores = 1;
    int memory_mib = 0;  // 0: not asked (the partition's default)
    int gpus = 0;
    bool low_priority = false;
};

// The instance's name for a data directory: "bai" + 8 hex digits of its path and creation time
// (two emulators on one Slurm never take each other's holders; the same directory keeps its own).
std::string slurm_instance_id(const std::filesystem::path& data_dir, long long created_ns);

// "bai-<instance>-<node id>": the holder's job name, what the poll looks for.
std::string holder_name(const SlurmSettings& settings, const std::string& node_id);
// The node id in a holder's name, or nullopt when the name is not this instance's.
std::optional<std::string> node_of_holder(const SlurmSettings& settings, std::string_view job_name);

// sbatch --parsable ... --wrap SCRIPT: a holder that does nothing but wait (every process of the
// node is a step started into it). Throws std::invalid_argument for a size Slurm cannot be asked
// for (no cores).
std::vector<std::string> sbatch_argv(const SlurmSettings& settings, const HolderAsk& ask);
// The holder's script. Where the host has a docker client, it also keeps the host's engine clean of
// this emulator's containers (labelled with settings.docker_owner and the Slurm job that held their
// node): when its allocation ends (cancelled, pre-empted: Slurm's SIGTERM) it removes its own; when
// it starts, those of allocations Slurm no longer runs (a host that failed with its jobs running),
// asked of squeue on the host, and only when squeue answers for the holder itself.
std::string holder_script(const SlurmSettings& settings);
// The job id in sbatch --parsable's answer ("123" or "123;cluster"); nullopt for anything else.
std::optional<std::string> parse_sbatch_answer(std::string_view answer);

// squeue of every job in every state (finished ones stay listed for MinJobAge), one line each:
// "id|name|state|host|reason".
std::vector<std::string> squeue_argv();
struct HolderState {
    std::string job_id;
    std::string node_id;  // from its name
    std::string state;    // PENDING, RUNNING, PREEMPTED, NODE_FAIL, CANCELLED, ...
    std::string host;     // "" while pending
    std::string reason;
};
// This instance's holders in squeue_argv()'s output; other lines (other instances', other users'
// jobs, malformed ones) are skipped.
std::vector<HolderState> parse_squeue(const SlurmSettings& settings, std::string_view output);

// What a holder's state means for its node (slurm.md, the table).
enum class HolderFate {
    waiting,    // PENDING, CONFIGURING...: not yet a node (the cluster is resizing)
    held,       // RUNNING: the node exists
    preempted,  // PREEMPTED: pre-empted, its job requeued, a new node asked for
    failed,     // NODE_FAIL, BOOT_FAIL: unusable, its job requeued
    released,   // CANCELLED, TIMEOUT, COMPLETED, FAILED, DEADLINE, OUT_OF_MEMORY: the node leaves
};
HolderFate fate_of(std::string_view slurm_state);
// Why a holder no longer holds its node, as the logs and the cluster's errors say it:
// "Slurm job 12 NODE_FAIL (NodeDown)".
std::string holder_loss_text(const HolderState& holder);

// The argv prefix that runs a process on the node's host as a step of its holder: srun --jobid
// --overlap, one task, the caller's environment, the step named `step_name` (to be cancelled by
// name: a SIGKILL to the srun client does not reach the step).
// A node with GPUs asks for them in each step (`gpus`): under a cgroup device constraint a step
// sees only the GPUs it asked for.
std::vector<std::string> srun_prefix(const std::string& holder_job, const std::string& step_name,
                                     const std::filesystem::path& cwd, int gpus = 0);
// A host's address: scontrol show node -o HOST, its NodeAddr (the host name itself when the
// configuration gives none); nullopt when the output names no node.
std::vector<std::string> scontrol_node_argv(const std::string& host);
std::optional<std::string> parse_node_address(std::string_view output);
// Whether that output says the host is not answering (its State has NOT_RESPONDING, DOWN or
// FAIL, or ends with '*' as older versions print it): a slurmd that died, which Slurm calls down
// only after SlurmdTimeout. false when it names no state.
bool parse_node_unresponsive(std::string_view output);
// The steps started into a holder (squeue --steps), their ids without the holder's own ("batch",
// "extern") and those that live as long as the node (named kNodeStepPrefix..., node_hosts.h):
// what is left of a job's processes.
std::vector<std::string> squeue_steps_argv(const std::string& holder_job);
std::vector<std::string> parse_steps(const std::string& holder_job, std::string_view output);

// scancel of one step (with SIGKILL) or of a whole holder.
std::vector<std::string> scancel_step_argv(const std::string& holder_job, const std::string& step_id);
std::vector<std::string> scancel_argv(const std::vector<std::string>& holder_jobs);

}  // namespace bai::engine
