// One run of a job on its nodes, on a thread of its own: its runtime (host, sandbox or docker:
// container_runtime.h), the job's directories on every node, its job-level volumes, hostfile and
// output directories, then the job preparation on every node, then the toolkit's processes
// (launch_plan.h), each logged in execution.log next to their stdout and stderr (on several nodes:
// execution-<nodeId>.log, one per node). Blocks until
// they are done or the run is cancelled.
#pragma once

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "emulator/arm/mount_volumes.h"
#include "emulator/engine/container_runtime.h"
#include "emulator/engine/declared_workload.h"
#include "emulator/engine/run_control.h"
#include "emulator/engine/storage_access.h"
#include "emulator/engine/node_hosts.h"
#include "emulator/engine/volume_links.h"

namespace bai::engine {

struct JobNode {
    std::string id;
    std::string address;
    std::filesystem::path root;
    std::vector<std::string> gpus;  // UUIDs
    int slots = 1;
    std::vector<std::string> gpu_devices;  // their device nodes (/dev/nvidiaN); none for fake GPUs
    // The cluster's volumes as the node attached them: relativeMountPath -> the directory behind it.
    std::vector<std::pair<std::string, std::filesystem::path>> volume_directories;
    // Where its processes run when not on this machine (node_hosts.h); null: here.
    std::shared_ptr<NodeHosts> hosts;
};

struct JobRunInputs {
    std::string job_id;
    std::string job_name;
    nlohmann::json properties;  // secrets included
    bool preview_layout = false;  // arm::uses_preview_output_layout
    // The cluster's key, for the diagnosis archive left beside the logs at the end (a 2018-05-01
    // job's: diagnosis_archive.h); empty: none, as the flat API's service left none.
    std::string diagnosis_pool;
    std::vector<JobNode> nodes;  // master first
    std::filesystem::path shared_dir;  // the job's temporary directory shared by its nodes
    std::filesystem::path mpi_agent;
    // bai-node-ssh, the job's `ssh` between its nodes (node_gateway.h); none: no such ssh.
    std::filesystem::path node_ssh;
    std::string default_python = "python";
    std::vector<arm::Volume> cluster_volumes;  // what each node has under its mount root (the shares' store directories)
    // Where a job with containerSettings runs; null: always on the host.
    const ContainerOptions* containers = nullptr;
    RuntimeProbe* runtimes = nullptr;
    MountSettings mounts;  // for the job's mounts
    // Scenarios: jobs whose command names a declared workload are played on `clock`.
    DeclaredWorkloads* workloads = nullptr;
    Clock* clock = nullptr;
    time::TimePoint started{};  // on `clock`, when the engine started the job
    // Told where on this machine the job's stdout and stderr go, once that directory exists.
    std::function<void(const std::filesystem::path&)> stdouterr_ready;
};

struct JobOutcome {
    enum class Result { succeeded, failed, cancelled };
    Result result = Result::succeeded;
    std::optional<int> exit_code;
    std::string error_code;  // JobFailed, JobPreparationFailed
    std::string error_message;
};

JobOutcome run_job(const JobRunInputs& in, const StorageAccess& storage, RunControl& control);

// The plm_rsh_agent script mpirun is given: `mpi-agent HOST COMMAND...` runs COMMAND on the
// emulated node HOST through the per-job node script $BAI_MPI_NODES/HOST.
void write_mpi_agent(const std::filesystem::path& path);

}  // namespace bai::engine
