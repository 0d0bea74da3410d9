// How a Batch node runs a task's or a start task's command line: split into words as a shell
// would and run without one (as the service does), in the task's directory, with the node's
// variables and the task's environmentSettings.
#pragma once

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "emulator/batch/task_container.h"
#include "emulator/engine/run_control.h"
#include "emulator/engine/shell_words.h"

namespace bai::batch {

// The words that run a command line's words on the node, in `cwd` (NodeImage::wrap).
using Wrap = std::function<std::vector<std::string>(const std::filesystem::path& cwd, std::vector<std::string> argv)>;

// A task's environmentSettings over `env`.
void add_settings(engine::Environment& env, const nlohmann::json& task);

// Runs the command line in `dir`/wd, writing `dir`/stdout.txt and stderr.txt: the exit code, or
// -1 with a failureInfo (CommandLineParseError, CommandProgramNotFound, a container's), or -1
// and null when `control` was cancelled before it started. A task with containerSettings runs
// in its container when the node has `containers` (its pool's containerConfiguration), and
// fails with ContainerInvalidSettings when it has none; `container_info` (when given) gets its
// container's TaskContainerExecutionInformation, or null.
std::pair<int, nlohmann::json> run_task_process(const nlohmann::json& task, const engine::Environment& env,
                                                const std::filesystem::path& dir, engine::RunControl& control,
                                                const Wrap& wrap, const NodeContainers* containers = nullptr,
                                                nlohmann::json* container_info = nullptr);

struct NodeTaskRun {
    nlohmann::json info;  // startTaskInfo, or a job preparation or release task's execution info
    bool succeeded = false;
};

// A task of the node's own (a start task, a job preparation or release task) and its retries
// (`task`'s maxTaskRetryCount) in `task_dir` (stdout.txt, stderr.txt, wd/), after its
// resourceFiles (a download that fails fails it, not retried). A command line that cannot be
// parsed is not retried; a program that cannot start reports 127, as a shell would.
NodeTaskRun run_node_task(const nlohmann::json& task, const engine::Environment& base, const std::filesystem::path& task_dir,
                          engine::RunControl& control, const Wrap& wrap, const NodeContainers* containers = nullptr);

}  // namespace bai::batch
