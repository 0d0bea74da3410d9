#include "emulator/batch/task_container.h"

#include <chrono>
#include <fstream>
#include <set>
#include <thread>

#include "common/crypto/random_id.h"
#include "common/log/logger.h"
#include "common/text/ascii.h"
#include "common/text/json_string.h"
#include "emulator/batch/command_line.h"
#include "emulator/batch/task_states.h"
#include "emulator/engine/docker_client.h"
#include "emulator/engine/process.h"
#include "emulator/engine/sandbox.h"

namespace bai::batch {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// A registry server as docker files its credentials: no scheme, no trailing '/', the host as
// written (docker looks a reference's host up in its configuration case-sensitively); Docker
// Hub's names as docker's own key. Pools' registries and images are matched ignoring case, as
// host names are.
std::string server_key(const std::string& server) {
    const std::string lower = engine::without_scheme(text::lower(server));  // "HTTPS://" too
    if (engine::is_docker_hub(lower) || lower == "index.docker.io/v1") return engine::kDockerHubKey;
    const size_t at = text::lower(server).find(lower);
    return at == std::string::npos ? lower : server.substr(at, lower.size());
}

// The server an image reference names: its first component when that is a host, else Docker Hub.
std::string server_of(const std::string& image) {
    const size_t slash = image.find('/');
    if (slash == std::string::npos || !engine::names_a_host(image.substr(0, slash))) return engine::kDockerHubKey;
    return server_key(image.substr(0, slash));
}

void log_line(const NodeContainers& node, const std::string& line) { log::info("batch node " + node.node_id + ": " + line); }

// The path the node's processes see for `host`, a path under the node's root.
std::string view_of(const NodeContainers& node, const fs::path& host) {
    const fs::path relative = host.lexically_relative(node.node_root);
    if (relative.empty() || relative == ".") return node.root_view;
    return (fs::path(node.root_view) / relative).string();
}

// Quiet: what docker says of a container already gone does not matter; bounded, so that an
// engine that does not answer cannot hold a task's thread (and the emulator's stop).
void remove_container(const std::string& docker, const std::string& name) {
    try {
        engine::Process::start({{"timeout", "30", docker, "rm", "--force", name}, engine::docker_environment(), "/", "/dev/null", "/dev/null"})
            ->wait();
    } catch (const std::exception&) {
    }
}

// What docker's client said of its own failure (written before or instead of the container's
// output, and ended with its advice to run `docker run --help`): its "docker: ..." line, or the
// first line of a usage error ("unknown flag: --x"); empty when the client said nothing.
std::string docker_error(const fs::path& stderr_file) {
    std::ifstream in(stderr_file);
    std::string line, first, said, last;
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        if (first.empty()) first = line;
        if (line.rfind("docker: ", 0) == 0) said = line.substr(8);
        last = line;
    }
    if (last.find("'docker run --help'") == std::string::npos) return "";
    if (said.empty()) said = first;
    const std::string daemon = "Error response from daemon: ";
    if (said.rfind(daemon, 0) == 0) said = said.substr(daemon.size());
    return said;
}

json with_message(json failure, const std::string& message) {
    failure["details"] = json::array({{{"name", "Message"}, {"value", message}}});
    return failure;
}

// Variables that would change what the docker client on this machine does (which engine it
// talks to, its configuration and plugins, its proxies, what it loads): never taken from a task.
bool steers_the_client(const std::string& name) {
    const std::string lower = text::lower(name);
    return lower.rfind("docker_", 0) == 0 || lower.rfind("ld_", 0) == 0 || lower.rfind("glibc_", 0) == 0 ||
           (lower.size() >= 6 && lower.compare(lower.size() - 6, 6, "_proxy") == 0);
}

// Whether docker's short options `word` (-d, -itd) ask for a detached container: the task's
// process would be gone at once, its container out of the task's reach. `docker create`, which
// the service runs, has no such option.
bool asks_detach(const std::string& word) {
    if (word == "--detach" || word.rfind("--detach=", 0) == 0) return word != "--detach=false";
    if (word.size() < 2 || word[0] != '-' || word[1] == '-') return false;
    // Clusters of docker run's one-letter flags that take no value.
    return word.find('d') != std::string::npos && word.find_first_not_of("ditP", 1) == std::string::npos;
}

// The names the task itself set (environmentSettings): passed even when they name the machine's
// (PATH, HOME), as the task asked.
std::set<std::string> own_names(const json& task) {
    std::set<std::string> names;
    const json settings = task.value("environmentSettings", json::array());
    if (!settings.is_array()) return names;
    for (const json& setting : settings) {
        if (setting.is_object() && setting.contains("name") && setting["name"].is_string()) names.insert(setting["name"].get<std::string>());
    }
    return names;
}

ContainerRun run_docker(const json& task, const json& settings, const engine::Environment& env, const fs::path& dir,
                        engine::RunControl& control, const NodeContainers& node, const std::vector<std::string>& argv) {
    const std::string docker = node.runtimes->docker();
    const std::string image = settings.value("imageName", "");
    if (image.empty() || image[0] == '-') {
        return {-1, failure_info("ContainerInvalidImage", "The container image '" + image + "' is not an image reference"), nullptr};
    }
    std::vector<std::string> options;
    if (const std::string run_options = settings.value("containerRunOptions", ""); run_options.find_first_not_of(" \t\n") != std::string::npos) {
        std::optional<std::vector<std::string>> words = split_command_line(run_options);
        if (!words) return {-1, failure_info("ContainerInvalidSettings", "The containerRunOptions have an unclosed quote"), nullptr};
        options = std::move(*words);
    }
    for (const std::string& word : options) {
        if (asks_detach(word)) {
            return {-1, with_message(failure_info("ContainerInvalidSettings", "The container settings are not valid"),
                                     "unknown flag: " + word + " (a task's container is made with docker create, which has none)"),
                    nullptr};
        }
    }
    const std::string name = engine::docker_name("bai-batch-" + node.node_id.substr(0, 18) + "-" + crypto::random_hex(4) + "-" +
                                                 dir.filename().string());
    const engine::ImageSource source = batch_image_source(image, settings.value("registry", json()), node.registries);
    const fs::path scratch = node.scratch / name;
    const engine::PullResult pulled =
        engine::pull_image(docker, source, scratch, control, [&node](const std::string& line) { log_line(node, line); });
    if (pulled.outcome == engine::PullResult::Outcome::cancelled) return {};
    if (pulled.outcome == engine::PullResult::Outcome::failed) {
        return {-1, with_message(failure_info(pull_failure_code(pulled.message), "The container image " + source.reference + " could not be pulled"),
                                 pulled.message),
                nullptr};
    }
    std::error_code ec;
    fs::create_directories(scratch, ec);
    fs::permissions(scratch, fs::perms::owner_all, ec);
    engine::DockerRun run;
    run.name = name;
    run.owner = node.runtimes->owner();
    run.image = source.reference;
    run.binds.push_back({node.node_root, node.root_view});
    run.gpus = node.gpus;
    run.init = false;  // the task's program is the container's, as the service's `docker create` makes it
    run.cidfile = (scratch / "container-id").string();
    run.options = std::move(options);
    if (settings.value("workingDirectory", "taskWorkingDirectory") != "containerImageDefault") run.cwd = view_of(node, dir / "wd");
    // The task's variables reach the container by name from the client's environment, which is
    // the emulator's docker environment and those of them that cannot steer the client; the
    // others go through a file only the emulator reads (docker's --env-file: one line each, so
    // a value with a line break cannot go that way).
    engine::Environment client = engine::docker_environment();
    const std::set<std::string> own = own_names(task);
    std::string env_file;
    for (const auto& [variable, value] : env) {
        if (engine::machine_variable(variable) && !own.count(variable)) continue;
        if (!steers_the_client(variable) && !engine::machine_variable(variable)) {
            client[variable] = value;
            run.variables.push_back(variable);
        } else if (value.find('\n') == std::string::npos) {
            env_file += variable + "=" + value + "\n";
        } else {
            log_line(node, "the variable " + variable + " is not passed into the container: its value has a line break");
        }
    }
    if (!env_file.empty()) {
        const fs::path file = scratch / "variables.env";
        std::ofstream(file) << env_file;
        fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write, ec);
        run.options.insert(run.options.end(), {"--env-file", file.string()});
    }
    ContainerRun out;
    std::shared_ptr<engine::Process> process;
    try {
        process = control.start({engine::docker_run_command(docker, run, argv), client, dir / "wd", dir / "stdout.txt", dir / "stderr.txt"});
    } catch (const std::exception& e) {
        fs::remove_all(scratch, ec);
        return {-1, with_message(failure_info("ContainerMiscError", "The container could not be started"), e.what()), nullptr};
    }
    if (!process) {
        fs::remove_all(scratch, ec);
        return {};
    }
    const engine::ExitStatus status = process->wait();
    std::string id;
    std::ifstream(run.cidfile) >> id;
    const std::string error = status.code >= 125 && status.code <= 127 ? docker_error(dir / "stderr.txt") : "";
    // A killed client leaves its container running; one that could not start may stay made. A
    // client killed while the engine was still making the container (no id written yet) is
    // followed by a second removal, once the engine has had time to finish.
    if (control.cancelled() || status.signal != 0 || !error.empty()) {
        remove_container(docker, name);
        if (id.empty()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(500));
            remove_container(docker, name);
        }
    }
    fs::remove_all(scratch, ec);  // the variables' file with it
    if (!id.empty()) out.container = {{"containerId", id}, {"state", "exited"}};
    if (error.empty() || control.cancelled()) {
        out.exit_code = status.code;
        return out;
    }
    out.container["error"] = error;
    if (status.code == 125) {
        const bool settings_refused = error.find("unknown flag") != std::string::npos || error.find("unknown shorthand") != std::string::npos ||
                                      error.find("invalid argument") != std::string::npos || error.find("flag needs") != std::string::npos ||
                                      error.find("conflicting options") != std::string::npos;
        out.failure = with_message(failure_info(settings_refused ? "ContainerInvalidSettings" : "ContainerMiscError",
                                                settings_refused ? "The container settings are not valid" : "The container could not be started"),
                                   error);
    } else {
        out.failure = with_message(failure_info("CommandProgramNotFound", "The specified command program is not found"), error);
    }
    return out;
}

}  // namespace

engine::ImageSource batch_image_source(const std::string& image, const json& registry, const json& registries) {
    engine::ImageSource source;
    source.reference = image;
    source.registry = server_of(image);
    const json* chosen = nullptr;
    if (registry.is_object() && !text::string_member(registry, "username").empty()) {
        chosen = &registry;
    } else if (registries.is_array()) {
        for (const json& candidate : registries) {
            if (candidate.is_object() && text::iequals(server_key(text::string_member(candidate, "registryServer")), source.registry)) {
                chosen = &candidate;
                break;
            }
        }
    }
    if (chosen) {
        source.username = text::string_member(*chosen, "username");
        source.password = text::string_member(*chosen, "password");
    }
    return source;
}

std::string pull_failure_code(const std::string& message) {
    const std::string m = text::lower(message);
    for (const char* registry_said : {"unauthorized", "authentication required", "no basic auth credentials", "denied", "connection refused",
                                      "no such host", "i/o timeout", "server gave http response", "x509", "tls:"}) {
        if (m.find(registry_said) != std::string::npos) return "ContainerInvalidRegistry";
    }
    return "ContainerInvalidImage";
}

namespace {

engine::RuntimeDecision runtime_for(const std::string& image, const NodeContainers& node) {
    return choose_runtime_for_image(image, node.options, node.runtimes ? node.runtimes->availability() : engine::RuntimeAvailability{});
}

json node_error(const std::string& code, const std::string& message, const std::string& detail) {
    return json{{"code", code}, {"message", message}, {"errorDetails", json::array({{{"name", "Message"}, {"value", detail}}})}};
}

}  // namespace

std::optional<json> prefetch_images(const json& configuration, const NodeContainers& node, engine::RunControl& control) {
    const json names = configuration.is_object() ? configuration.value("containerImageNames", json::array()) : json::array();
    if (!names.is_array()) return std::nullopt;
    for (const json& name : names) {
        if (!name.is_string()) continue;
        const std::string image = name.get<std::string>();
        // Pulled where its tasks would run in docker; an image the sandbox serves (--image), or
        // one no runtime takes, is not.
        const engine::RuntimeDecision decision = runtime_for(image, node);
        if (!decision.error.empty()) {
            return node_error("ContainerMiscError", "The container image " + image + " cannot be used on this node", decision.error);
        }
        if (decision.kind != engine::RuntimeKind::docker) {
            log_line(node, "container image " + image + " not pulled: " + decision.reason);
            continue;
        }
        if (image[0] == '-') return node_error("ContainerInvalidImage", "The container image " + image + " could not be pulled", "not an image reference");
        const engine::ImageSource source = batch_image_source(image, json(), node.registries);
        const engine::PullResult pulled = engine::pull_image(node.runtimes->docker(), source, node.scratch / "prefetch", control,
                                                             [&node](const std::string& line) { log_line(node, line); });
        if (pulled.outcome == engine::PullResult::Outcome::cancelled) return std::nullopt;
        if (pulled.outcome == engine::PullResult::Outcome::failed) {
            return node_error(pull_failure_code(pulled.message), "The container image " + source.reference + " could not be pulled", pulled.message);
        }
    }
    return std::nullopt;
}

std::optional<ContainerRun> run_in_container(const json& task, const engine::Environment& env, const fs::path& dir,
                                             engine::RunControl& control, const NodeContainers& node, const std::vector<std::string>& argv) {
    const json settings = task.value("containerSettings", json::object());
    const std::string image = settings.value("imageName", "");
    if (image.empty()) return ContainerRun{-1, failure_info("ContainerInvalidImage", "The containerSettings name no image"), nullptr};
    const engine::RuntimeDecision decision = runtime_for(image, node);
    if (!decision.error.empty()) {
        return ContainerRun{-1, with_message(failure_info("ContainerMiscError", "The container could not be started"), decision.error), nullptr};
    }
    if (decision.kind == engine::RuntimeKind::docker) return run_docker(task, settings, env, dir, control, node, argv);
    if (argv.empty()) {
        return ContainerRun{-1, failure_info("CommandLineParseError", "The command line is empty and the image's own command is known only to docker"),
                            nullptr};
    }
    if (decision.kind == engine::RuntimeKind::sandbox && !decision.root.empty()) {
        engine::SandboxSpec spec;
        spec.root = decision.root;
        spec.binds.push_back({node.node_root, node.root_view});
        spec.hostname = node.hostname;
        spec.devices = node.devices;
        spec.cwd = view_of(node, dir / "wd");
        std::shared_ptr<engine::Process> process;
        try {
            process = control.start({engine::sandbox_command(node.runtimes->bwrap(), spec, argv), env, dir / "wd", dir / "stdout.txt",
                                     dir / "stderr.txt"});
        } catch (const std::exception& e) {
            return ContainerRun{-1, with_message(failure_info("ContainerMiscError", "The container could not be started"), e.what()), nullptr};
        }
        if (!process) return ContainerRun{};
        return ContainerRun{process->wait().code, nullptr, nullptr};
    }
    log_line(node, "task in " + dir.string() + " runs on the node: " + decision.reason);
    return std::nullopt;
}

}  // namespace bai::batch
