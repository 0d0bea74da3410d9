#include "emulator/engine/node_setup.h"

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "emulator/engine/host_volumes.h"
#include "emulator/engine/job_environment.h"
#include "emulator/engine/node_hosts.h"
#include "emulator/engine/process.h"
#include "emulator/engine/volume_links.h"

namespace bai::engine {

namespace fs = std::filesystem;
using nlohmann::json;

Environment node_base_environment(const fs::path& node_root) {
    Environment env;
    for (const char* name : {"PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "TZ", "SHELL"}) {
        if (const char* value = std::getenv(name)) env[name] = value;
    }
    if (!env.count("PATH")) env["PATH"] = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
    if (!node_root.empty()) {
        std::error_code ec;
        fs::create_directories(node_root / "tmp", ec);
        env["TMPDIR"] = (node_root / "tmp").string();
    }
    return env;
}

NodeSetupResult set_up_node(const Node& node, const ClusterSpec& spec, const StorageAccess& storage, RunControl& control,
                            AttachedVolumes& volumes) {
    std::error_code ec;
    fs::create_directories(node.mount_root(), ec);
    fs::create_directories(node.jobs_root(), ec);
    if (ec) return {false, "NodeSetupFailed", "cannot create the node's directories under " + node.root.string() + ": " + ec.message()};
    if (node.hosts && !node.hosts->shares_disk()) {
        // A host that does not see the data directory gets the node's directories, and the
        // programs that mount volumes there, at the same paths.
        fs::create_directories(node.root / "tmp", ec);
        std::vector<fs::path> copied{node.root, node.mount_root(), node.jobs_root(), node.root / "tmp"};
        for (const fs::path& program : {storage.remote_blobs.program, storage.remote_shares.program}) {
            if (!program.empty()) copied.push_back(program);
        }
        try {
            node.hosts->copy_to_host(node.id, copied);
        } catch (const std::exception& e) {
            return {false, "NodeSetupFailed", "node " + node.id + ": " + e.what()};
        }
    }
    std::vector<std::string> notes;
    std::vector<arm::Volume> list;
    try {
        list = arm::volumes_of(spec.mount_volumes);
        attach_volumes(node.mount_root(), list, storage, notes, volumes);
        if (node.hosts) {
            if (std::string why = attach_on_host(*node.hosts, node.id, kNodeStepPrefix, node.mount_root(), list, storage,
                                                 node.root / "host-mounts", volumes);
                !why.empty()) {
                return {false, "MountFailed", std::string("node ") + node.id + ": " + why};
            }
        }
    } catch (const std::exception& e) {
        return {false, "MountFailed", std::string("node ") + node.id + ": " + e.what()};
    }
    if (!spec.setup_task.is_object()) return {};

    const json& task = spec.setup_task;
    Environment env = node_base_environment(node.root);
    env["AZ_BATCHAI_MOUNT_ROOT"] = node.mount_root().string();
    env["AZ_BATCHAI_NUM_GPUS"] = std::to_string(node.gpus.size());
    add_user_variables(env, task.value("environmentVariables", json::array()));
    add_user_variables(env, task.value("secrets", json::array()));
    std::string prefix = expand_variables(task.value("stdOutErrPathPrefix", ""), env);
    fs::path logs = fs::path(prefix) / task.value("stdOutErrPathSuffix", "");
    // On a host the task's output is written here, by srun: into a share's directory in the
    // store, not through what this machine has at the node's mount point (nothing, where the share
    // is mounted on the host alone).
    if (node.hosts) logs = in_backing_directory(logs, backing_directories(node.mount_root(), list, storage));
    fs::create_directories(logs, ec);
    if (ec) return {false, "SetupTaskFailed", "cannot create the setup task's log directory " + logs.string() + ": " + ec.message()};
    ProcessSpec p{{"/bin/bash", "-c", task.value("commandLine", "")},
                  env,
                  node.root,
                  logs / ("stdout-" + node.id + ".txt"),
                  logs / ("stderr-" + node.id + ".txt")};
    std::shared_ptr<Process> process;
    try {
        if (node.hosts) {
            std::vector<std::string> argv = node.hosts->launch_prefix(node.id, "setup-task", node.root);
            argv.insert(argv.end(), p.argv.begin(), p.argv.end());
            p.argv = std::move(argv);
        }
        process = control.start(p);
    } catch (const std::exception& e) {
        return {false, "SetupTaskFailed", std::string("node ") + node.id + ": the setup task did not start: " + e.what()};
    }
    if (!process) return {false, "NodeRemoved", "the node was removed during its setup"};
    ExitStatus status = process->wait();
    adopt_share_writes(storage.files, {logs});
    if (control.cancelled()) return {false, "NodeRemoved", "the node was removed during its setup"};
    if (status.code != 0) {
        return {false, "SetupTaskFailed",
                "The setup task failed on node " + node.id + " with exit code " + std::to_string(status.code) +
                    "; its output is in " + (logs / ("stderr-" + node.id + ".txt")).string()};
    }
    return {};
}

}  // namespace bai::engine
