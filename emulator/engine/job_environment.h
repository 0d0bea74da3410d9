// The environment of a job's processes on one node (batchai-api.md §3): the AZ_BATCHAI_*
// variables with the paths as the job sees them, the GPU variables, then the job's own
// environmentVariables and secrets. The same for the job preparation and the job.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "emulator/engine/shell_words.h"

namespace bai::engine {

// Paths as the job's processes see them on one node (inside its container when it has one).
struct NodePaths {
    std::string mount_root;       // AZ_BATCHAI_MOUNT_ROOT
    std::string job_mount_root;   // AZ_BATCHAI_JOB_MOUNT_ROOT
    std::string job_temp_root;    // AZ_BATCHAI_JOB_TEMP_DIR
    std::string job_temp;         // AZ_BATCHAI_JOB_TEMP
    std::string shared_job_temp;  // AZ_BATCHAI_SHARED_JOB_TEMP
    std::string hostfile;         // AZ_BATCHAI_MPI_HOST_FILE
};

struct NodeGpus {
    std::vector<std::string> uuids;
    // true where the runtime shows the node only its own devices (containers): they are numbered
    // from 0; false on the host, where CUDA_VISIBLE_DEVICES must name them by UUID.
    bool isolated = false;
};

struct EnvironmentInputs {
    const nlohmann::json& properties;  // the job's properties, secrets included
    NodePaths paths;
    std::vector<std::string> host_list;  // the addresses of the job's nodes, master first
    NodeGpus gpus;
    bool preview_layout = false;  // arm::uses_preview_output_layout: the logs straight in the segment
};

Environment job_environment(const EnvironmentInputs& in);

// {stdOutErrPathPrefix}/{segment}/stdouterr, expanded in `env`.
// {stdOutErrPathPrefix}/{segment} itself for a job in the preview's layout
// (arm::uses_preview_output_layout).
std::string stdouterr_directory(const nlohmann::json& properties, const Environment& env, bool preview_layout);
// {pathPrefix}/{segment}/outputs[/{pathSuffix}] of one outputDirectories entry, expanded.
std::string output_directory(const nlohmann::json& properties, const nlohmann::json& output, const Environment& env);

// Each {"name", "value"} of an environmentVariables or secrets list set in `env` (a secret given
// only as a Key Vault reference cannot be read offline: it is set empty).
void add_user_variables(Environment& env, const nlohmann::json& list);

}  // namespace bai::engine
