// A multi-instance task (multiInstanceSettings), run as the service runs one: a primary on one
// node and a subtask on each of numberOfInstances - 1 others; each downloads the
// commonResourceFiles into its task directory and runs the coordinationCommandLine; once every
// coordination command has exited 0, the primary alone runs the task's commandLine. What the
// coordination commands left running (an MPI daemon, say) is stopped when the primary ends.
// A coordination command that fails fails the task (exitCode its code, FailureExitCode).
//
// Every instance knows the others as the service's nodes did: AZ_BATCH_HOST_LIST (addresses,
// the primary's first), AZ_BATCH_NODE_LIST (the same, ';'), AZ_BATCH_MASTER_NODE
// (address:6000), AZ_BATCH_IS_CURRENT_NODE_MASTER, AZ_BATCH_TASK_SHARED_DIR (the task's
// directory, on each node its own). `ssh ADDRESS COMMAND` from one reaches another (the
// emulator's node gateway, as Batch AI's jobs have it), so that `mpirun -host $AZ_BATCH_HOST_LIST`
// starts its ranks on their nodes; the instances' OpenMPI is held to loopback.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "emulator/batch/node_image.h"
#include "emulator/batch/task_process.h"
#include "emulator/engine/run_control.h"
#include "emulator/engine/shell_words.h"

namespace bai::batch {

// The port of AZ_BATCH_MASTER_NODE (the service's; reserved for it, not for MPI).
inline constexpr int kMasterNodePort = 6000;

// One node of the task: the primary's first.
struct TaskInstance {
    std::string node_id;
    std::string address;
    std::filesystem::path node_root;
    std::filesystem::path dir;  // the task's directory on the node (a path of this machine)
    NodeImage image;            // how the node's processes see paths
    Wrap wrap;                  // how they are started
    engine::Environment env;    // the node's variables and the task's
    nlohmann::json node_info;   // ComputeNodeInformation of the node
};

struct MultiInstanceResult {
    int exit_code = -1;       // the primary's (or the failed coordination command's); -1: none
    nlohmann::json failure;   // failureInfo, null when none
    nlohmann::json subtasks;  // SubtaskInformation of the instances but the primary, ids from 1
};

// The variables that tell each instance where the others are.
void add_instance_variables(std::vector<TaskInstance>& instances);

// SubtaskInformation of each node but the primary's (the first of `node_infos`), running from `now`.
nlohmann::json running_subtasks(const std::vector<nlohmann::json>& node_infos, const std::string& now);

// Runs the task on its instances (see above). `node_ssh`: bai-node-ssh (empty: no ssh between
// the nodes); `scratch`: a directory of the emulator's own for the nodes' scripts, removed after.
// Returns when every process has ended; `control` cancelled stops them all.
MultiInstanceResult run_multi_instance(const nlohmann::json& task, std::vector<TaskInstance>& instances,
                                       engine::RunControl& control, const std::filesystem::path& node_ssh,
                                       const std::filesystem::path& scratch);

}  // namespace bai::batch
