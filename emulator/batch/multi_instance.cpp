#include "emulator/batch/multi_instance.h"

#include <unistd.h>

#include <condition_variable>
#include <csignal>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "common/log/logger.h"
#include "common/time/timestamps.h"
#include "emulator/batch/command_line.h"
#include "emulator/batch/task_files.h"
#include "emulator/batch/task_states.h"
#include "emulator/engine/node_gateway.h"
#include "emulator/engine/writable_root.h"

namespace bai::batch {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// What became of one instance's part before the primary's command: its coordination command's
// exit code, or why it did not run.
struct InstanceEnd {
    std::optional<int> code;
    json failure;  // null: none of its own
};

// `ssh ADDRESS COMMAND` between the instances (node_gateway.h): each node's script, the gateway's
// name and token in every instance's environment, bai-node-ssh first on its PATH (a link on the
// host; a copy in a sandbox, which sees the node's directory and not this machine's).
std::unique_ptr<engine::NodeGateway> open_gateway(std::vector<TaskInstance>& instances, const fs::path& node_ssh,
                                                  const fs::path& scratch) {
    std::error_code ec;
    if (node_ssh.empty() || !fs::is_regular_file(node_ssh, ec)) return nullptr;
    fs::create_directories(scratch, ec);
    std::vector<engine::NodeGateway::Node> nodes;
    for (const TaskInstance& instance : instances) nodes.push_back({instance.address, instance.node_id, scratch / instance.address});
    std::unique_ptr<engine::NodeGateway> gateway;
    try {
        gateway = std::make_unique<engine::NodeGateway>(std::move(nodes), false);
    } catch (const std::exception& e) {
        log::warning(std::string("multi-instance task: no ssh between its nodes: ") + e.what());
        return nullptr;
    }
    for (TaskInstance& instance : instances) {
        engine::Environment& env = instance.env;
        env["BAI_NODE_GATEWAY"] = gateway->name();
        env["BAI_NODE_GATEWAY_TOKEN"] = gateway->token();
        env["BAI_NODE_ADDRESS"] = instance.address;
        const fs::path bin = instance.node_root / "volatile" / "bin";
        fs::create_directories(bin, ec);
        fs::remove(bin / "ssh", ec);
        if (instance.image.sandboxed()) {
            fs::copy_file(node_ssh, bin / "ssh", ec);
        } else {
            fs::create_symlink(node_ssh, bin / "ssh", ec);
        }
        if (!ec) {
            const std::string path = env.count("PATH") ? env["PATH"] : "/usr/local/bin:/usr/bin:/bin";
            env["PATH"] = instance.image.view(instance.node_root, bin) + ":" + path;
        }
    }
    for (const TaskInstance& instance : instances) {
        const fs::path script = scratch / instance.address;
        std::ofstream(script) << engine::node_script(instance.node_id, instance.address, instance.dir / "wd", instance.env,
                                                     instance.wrap(instance.dir / "wd", {}));
        fs::permissions(script, fs::perms::owner_all, ec);
    }
    return gateway;
}

// Each subtask's end: its coordination command's exit code, else its own failure, else the
// task's (or TaskEnded: it was stopped).
void end_subtasks(json& subtasks, const std::vector<InstanceEnd>& ends, const json& task_failure, const std::string& now) {
    for (json& subtask : subtasks) {
        const InstanceEnd& end = ends[subtask.value("id", 0)];
        subtask["previousState"] = subtask.value("state", "running");
        subtask["previousStateTransitionTime"] = subtask.value("stateTransitionTime", now);
        subtask["state"] = "completed";
        subtask["stateTransitionTime"] = now;
        subtask["endTime"] = now;
        if (end.code) {
            subtask["exitCode"] = *end.code;
            subtask["result"] = *end.code == 0 ? "success" : "failure";
            if (*end.code != 0) subtask["failureInfo"] = failure_exit_code();
        } else {
            subtask["result"] = "failure";
            subtask["failureInfo"] = !end.failure.is_null() ? end.failure : !task_failure.is_null() ? task_failure : task_ended();
        }
    }
}

// Waits until every coordination command has exited, or one has failed (the others are stopped
// then: they may never end); a failure is the task's, with its exit code.
void wait_for_coordination(const std::vector<std::shared_ptr<engine::Process>>& processes, std::vector<InstanceEnd>& ends,
                           MultiInstanceResult& result) {
    std::mutex mutex;
    std::condition_variable changed;
    size_t exited = 0;
    std::optional<size_t> failed;
    std::vector<std::thread> waiters;
    for (size_t i = 0; i < processes.size(); ++i) {
        waiters.emplace_back([&, i] {
            const int code = processes[i]->wait_exit().code;
            std::lock_guard guard(mutex);
            ends[i].code = code;
            ++exited;
            if (code != 0 && !failed) failed = i;
            changed.notify_all();
        });
    }
    {
        std::unique_lock lock(mutex);
        changed.wait(lock, [&] { return exited == processes.size() || failed.has_value(); });
        if (failed) {
            result.exit_code = *ends[*failed].code;
            result.failure = failure_exit_code();
        }
    }
    if (failed) {
        for (const auto& process : processes) process->kill_group(SIGKILL);
    }
    for (std::thread& waiter : waiters) waiter.join();
    if (failed) {  // those stopped here did not end on their own
        for (size_t i = 0; i < processes.size(); ++i) {
            if (i != *failed && ends[i].code && *ends[i].code == 128 + SIGKILL) ends[i].code.reset();
        }
    }
}

}  // namespace

void add_instance_variables(std::vector<TaskInstance>& instances) {
    std::string hosts, nodes;
    for (size_t i = 0; i < instances.size(); ++i) {
        hosts.append(i ? "," : "").append(instances[i].address);
        nodes.append(i ? ";" : "").append(instances[i].address);
    }
    for (size_t i = 0; i < instances.size(); ++i) {
        engine::Environment& env = instances[i].env;
        env["AZ_BATCH_HOST_LIST"] = hosts;
        env["AZ_BATCH_NODE_LIST"] = nodes;
        env["AZ_BATCH_MASTER_NODE"] = instances[0].address + ":" + std::to_string(kMasterNodePort);
        env["AZ_BATCH_IS_CURRENT_NODE_MASTER"] = i == 0 ? "true" : "false";
        env["AZ_BATCH_TASK_SHARED_DIR"] = instances[i].image.view(instances[i].node_root, instances[i].dir);
        // The nodes are this machine: OpenMPI listens and talks on loopback only (unless the
        // task says otherwise), and runs as root where the emulator does, as mpirun refuses by
        // default and a node's task user was no root.
        env.emplace("OMPI_MCA_oob_tcp_if_include", "lo");
        env.emplace("OMPI_MCA_btl_tcp_if_include", "lo");
        if (::geteuid() == 0) {
            env.emplace("OMPI_ALLOW_RUN_AS_ROOT", "1");
            env.emplace("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
        }
    }
}

json running_subtasks(const std::vector<json>& node_infos, const std::string& now) {
    json subtasks = json::array();
    for (size_t i = 1; i < node_infos.size(); ++i) {
        subtasks.push_back({{"id", static_cast<int>(i)},
                            {"nodeInfo", node_infos[i]},
                            {"startTime", now},
                            {"state", "running"},
                            {"stateTransitionTime", now}});
    }
    return subtasks;
}

MultiInstanceResult run_multi_instance(const json& task, std::vector<TaskInstance>& instances, engine::RunControl& control,
                                       const fs::path& node_ssh, const fs::path& scratch) {
    MultiInstanceResult result;
    std::vector<json> node_infos;
    for (const TaskInstance& instance : instances) node_infos.push_back(instance.node_info);
    result.subtasks = running_subtasks(node_infos, time::now_iso8601());
    const json settings = task.value("multiInstanceSettings", json::object());
    std::vector<InstanceEnd> ends(instances.size());
    std::error_code ec;
    if (task.contains("containerSettings")) {
        // Refused, not run outside the containers it asks for (README, "Not emulated").
        result.failure = failure_info("ContainerInvalidSettings", "Multi-instance tasks with containerSettings are not emulated");
        end_subtasks(result.subtasks, ends, result.failure, time::now_iso8601());
        return result;
    }

    // Every instance's directory and common files (in the task's directory, not its wd); the
    // primary's own resource files in its wd.
    const json common{{"resourceFiles", settings.value("commonResourceFiles", json::array())}};
    for (size_t i = 0; i < instances.size() && result.failure.is_null(); ++i) {
        fs::create_directories(instances[i].dir / "wd", ec);
        for (const char* log : {"stdout.txt", "stderr.txt"}) std::ofstream(instances[i].dir / log, std::ios::app);
        std::optional<json> missing = download_resource_files(common, instances[i].dir);
        if (!missing && i == 0) missing = download_resource_files(task, instances[i].dir / "wd");
        if (missing) {
            ends[i].failure = *missing;
            result.failure = *missing;
        }
    }

    std::unique_ptr<engine::NodeGateway> gateway;
    if (result.failure.is_null()) gateway = open_gateway(instances, node_ssh, scratch);

    // The coordination command everywhere, at once; the primary's command once they have all
    // exited 0.
    std::vector<std::shared_ptr<engine::Process>> coordination;
    if (result.failure.is_null()) {
        std::optional<std::vector<std::string>> argv = split_command_line(settings.value("coordinationCommandLine", ""));
        if (!argv) result.failure = failure_info("CommandLineParseError", "The coordination command line has an unclosed quote or no word");
        for (size_t i = 0; argv && i < instances.size(); ++i) {
            const TaskInstance& instance = instances[i];
            std::shared_ptr<engine::Process> process;
            try {
                process = control.start({instance.wrap(instance.dir / "wd", *argv), instance.env, instance.dir / "wd",
                                         instance.dir / "stdout.txt", instance.dir / "stderr.txt"});
            } catch (const std::exception& e) {
                json failure = failure_info("CommandProgramNotFound", "The specified command program is not found");
                failure["details"] = json::array({{{"name", "Message"}, {"value", e.what()}}});
                ends[i].failure = failure;
                result.failure = failure;
            }
            if (!process) break;
            coordination.push_back(std::move(process));
        }
        if (result.failure.is_null()) wait_for_coordination(coordination, ends, result);
    }
    if (result.failure.is_null() && coordination.size() == instances.size() && !control.cancelled()) {
        std::tie(result.exit_code, result.failure) = run_task_process(task, instances[0].env, instances[0].dir, control, instances[0].wrap);
    }

    // What the coordination commands left running ends with the primary.
    for (const std::shared_ptr<engine::Process>& process : coordination) {
        process->kill_group(SIGKILL);
        process->wait();
    }
    if (gateway) gateway->stop();
    gateway.reset();
    engine::remove_tree(scratch, ec);
    end_subtasks(result.subtasks, ends, result.failure, time::now_iso8601());
    return result;
}

}  // namespace bai::batch
