// What runs where for a job (batchai-api.md §4): the job preparation on every node, then the
// toolkit's processes with their node, shell command, extra variables and log file names. Pure:
// no processes, no files; the job runner carries the plan out.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "emulator/engine/shell_words.h"

namespace bai::engine {

struct PlanNode {
    std::string id;       // tvm-...
    std::string address;  // 127.0.1.N
    int slots = 1;        // MPI slots: the size's GPUs, else its cores
};

struct PlanInputs {
    std::vector<PlanNode> nodes;  // the job's nodes, master first
    std::string default_python = "python";
    // For the MPI toolkits: mpirun runs on the master node's host side and reaches every node,
    // the master included, through `mpi_agent` (plm_rsh_agent), with this hostfile.
    std::string mpi_agent;
    std::string launcher_hostfile;
    // Where the ranks start when it is not mpirun's own directory (in containers: the job's
    // directory as the nodes see it).
    std::string rank_directory;
    // The nodes are hosts of a cluster manager (Slurm), each a machine of its own: mpirun runs
    // on the master node's host and OpenMPI talks over the hosts' network, not loopback.
    bool on_hosts = false;
    // mpirun runs on the master's own host but outside its container (docker on hosts): it must
    // take no node for its own, or it would start the master's ranks itself, outside the
    // container; every node's ranks then start through the agent.
    bool master_through_agent = false;
};

struct PlannedProcess {
    size_t node = 0;      // index into PlanInputs::nodes
    std::string role;     // "job preparation", "master", "rank 2", "worker 1", "parameter server 0"
    std::string command;  // for /bin/bash -c, in the node's environment
    Environment env;      // added to the node's environment
    std::string stdout_name;
    std::string stderr_name;
    // false for TensorFlow parameter servers: the job ends when the others have, and they are
    // stopped then.
    bool required = true;
    // mpirun: started outside the node's container; its ranks enter their nodes through the agent.
    bool mpi_launcher = false;
};

struct LaunchPlan {
    std::string tool_type;                   // as the service reports it: "cntk", "custom", ...
    std::vector<PlannedProcess> preparation;  // one per node when jobPreparation is set
    std::vector<PlannedProcess> processes;
    std::string hostfile;                    // the OpenMPI hostfile's text
};

// Throws std::invalid_argument when the job cannot run on these nodes (its text says why).
LaunchPlan plan_launch(const nlohmann::json& properties, const PlanInputs& in);

// "mpirun ... -np N ... /bin/bash -c '<command>'" as the MPI toolkits run their command.
std::string mpirun_command(const PlanInputs& in, int process_count, const std::string& command);

}  // namespace bai::engine
