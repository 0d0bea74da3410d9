#include "emulator/batch/task_process.h"

#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "common/time/timestamps.h"
#include "emulator/batch/command_line.h"
#include "emulator/batch/task_files.h"
#include "emulator/batch/task_states.h"
#include "emulator/engine/process.h"

namespace bai::batch {

namespace fs = std::filesystem;
using nlohmann::json;

void add_settings(engine::Environment& env, const json& task) {
    const json settings = task.value("environmentSettings", json::array());
    if (!settings.is_array()) return;
    for (const json& setting : settings) {
        if (!setting.is_object() || !setting.contains("name") || !setting["name"].is_string()) continue;
        const json value = setting.contains("value") ? setting["value"] : json("");
        env[setting["name"].get<std::string>()] = value.is_string() ? value.get<std::string>() : value.dump();
    }
}

std::pair<int, json> run_task_process(const json& task, const engine::Environment& env, const fs::path& dir,
                                      engine::RunControl& control, const Wrap& wrap, const NodeContainers* containers,
                                      json* container_info) {
    if (container_info) *container_info = nullptr;
    const json settings = task.value("containerSettings", json());
    const bool in_container = settings.is_object();
    if (in_container && !containers) {
        return {-1, failure_info("ContainerInvalidSettings",
                                 "The task has containerSettings but its pool has no containerConfiguration")};
    }
    const std::string line = task.value("commandLine", "");
    std::optional<std::vector<std::string>> argv = split_command_line(line);
    // A container's task with no command line runs its image's own command.
    if (!argv && in_container && line.find_first_not_of(" \t\n") == std::string::npos) argv.emplace();
    if (!argv) return {-1, failure_info("CommandLineParseError", "The command line has an unclosed quote or no word")};
    // The service makes the task's stdout.txt and stderr.txt before it starts the program: they
    // are there (empty) when the program is not found.
    for (const char* log : {"stdout.txt", "stderr.txt"}) std::ofstream(dir / log, std::ios::app);
    if (in_container) {
        if (std::optional<ContainerRun> ran = run_in_container(task, env, dir, control, *containers, *argv)) {
            if (container_info) *container_info = ran->container;
            return {ran->exit_code, ran->failure};
        }
        if (argv->empty()) return {-1, failure_info("CommandLineParseError", "The command line has no word")};
    }
    try {
        std::shared_ptr<engine::Process> process =
            control.start({wrap(dir / "wd", *argv), env, dir / "wd", dir / "stdout.txt", dir / "stderr.txt"});
        if (!process) return {-1, nullptr};
        return {process->wait().code, nullptr};
    } catch (const std::exception& e) {
        json failure = failure_info("CommandProgramNotFound", "The specified command program is not found");
        failure["details"] = json::array({{{"name", "Message"}, {"value", e.what()}}});
        return {-1, failure};
    }
}

NodeTaskRun run_node_task(const json& task, const engine::Environment& base, const fs::path& task_dir,
                          engine::RunControl& control, const Wrap& wrap, const NodeContainers* containers) {
    NodeTaskRun run;
    run.info = {{"state", "running"}, {"startTime", time::now_iso8601()}, {"retryCount", 0}};
    const int max_retries = task.value("maxTaskRetryCount", 0);
    engine::Environment env = base;
    add_settings(env, task);
    std::optional<json> missing = download_resource_files(task, task_dir / "wd");
    if (missing) run.info["failureInfo"] = *missing;
    for (int attempt = 0; !missing; ++attempt) {
        run.info["retryCount"] = attempt;
        run.info["lastRetryTime"] = time::now_iso8601();
        json container;
        auto [code, failure] = run_task_process(task, env, task_dir, control, wrap, containers, &container);
        if (container.is_null()) {
            run.info.erase("containerInfo");  // an earlier attempt's
        } else {
            run.info["containerInfo"] = container;
        }
        if (code == -1 && failure.is_null()) return run;  // the node is leaving
        if (!failure.is_null()) {
            run.info["failureInfo"] = failure;
            if (failure.value("code", "") == "CommandLineParseError") break;
            code = 127;
        }
        run.info["exitCode"] = code;
        if (code == 0) {
            run.info.erase("failureInfo");
            run.succeeded = true;
            break;
        }
        if (!run.info.contains("failureInfo")) run.info["failureInfo"] = failure_exit_code();
        if (control.cancelled() || (max_retries >= 0 && attempt >= max_retries)) break;
    }
    run.info["state"] = "completed";
    run.info["endTime"] = time::now_iso8601();
    run.info["result"] = run.succeeded ? "success" : "failure";
    return run;
}

}  // namespace bai::batch
