#include "emulator/batch/task_container.h"

#include <fstream>

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

// The key docker's config files Docker Hub's credentials under.
constexpr const char* kDockerHub = "https://index.docker.io/v1/";

// A registry server as docker keys it: no scheme, no trailing '/', lower case; Docker Hub's
// names as docker's own key.
std::string server_key(std::string server) {
    for (const char* scheme : {"https://", "http://"}) {
        if (text::lower(server).rfind(scheme, 0) == 0) server = server.substr(std::string(scheme).size());
    }
    while (!server.empty() && server.back() == '/') server.pop_back();
    server = text::lower(server);
    if (server.empty() || server == "docker.io" || server == "index.docker.io" || server == "registry-1.docker.io" ||
        server == "registry.hub.docker.com" || server == "index.docker.io/v1") {
        return kDockerHub;
    }
    return server;
}

// The server an image reference names: its first component when that is a host (has a '.' or
// a ':', or is localhost), else Docker Hub.
std::string server_of(const std::string& image) {
    const size_t slash = image.find('/');
    if (slash == std::string::npos) return kDockerHub;
    const std::string first = image.substr(0, slash);
    const bool host = first.find('.') != std::string::npos || first.find(':') != std::string::npos || first == "localhost";
    return host ? server_key(first) : kDockerHub;
}

void log_line(const NodeContainers& node, const std::string& line) { log::info("batch node " + node.node_id + ": " + line); }

// The path the node's processes see for `host`, a path under the node's root.
std::string view_of(const NodeContainers& node, const fs::path& host) {
    const fs::path relative = host.lexically_relative(node.node_root);
    if (relative.empty() || relative == ".") return node.root_view;
    return (fs::path(node.root_view) / relative).string();
}

bool docker_chosen(const NodeContainers& node) {
    return node.runtimes && node.options.choice != engine::RuntimeChoice::host &&
           node.options.choice != engine::RuntimeChoice::sandbox && node.runtimes->availability().docker;
}

// Quiet: what docker says of a container already gone does not matter.
void remove_container(const std::string& docker, const std::string& name) {
    try {
        engine::Process::start({{docker, "rm", "--force", name}, engine::docker_environment(), "/", "/dev/null", "/dev/null"})->wait();
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

// The client's environment: the task's (what `--env NAME` passes in), with the emulator's word
// on where the engine is and the machine's own PATH and HOME (the client's configuration).
engine::Environment client_environment(const engine::Environment& env) {
    engine::Environment client = env;
    for (const auto& [name, value] : engine::docker_environment()) {
        if (name.rfind("DOCKER_", 0) == 0 || engine::machine_variable(name)) client[name] = value;
    }
    return client;
}

ContainerRun run_docker(const json& settings, const engine::Environment& env, const fs::path& dir, engine::RunControl& control,
                        const NodeContainers& node, const std::vector<std::string>& argv) {
    const std::string docker = node.runtimes->docker();
    const std::string name = engine::docker_name("bai-batch-" + node.node_id.substr(0, 18) + "-" + crypto::random_hex(4) + "-" +
                                                 dir.filename().string());
    const engine::ImageSource source = batch_image_source(settings.value("imageName", ""), settings.value("registry", json()), node.registries);
    const fs::path scratch = node.scratch / name;
    const engine::PullResult pulled =
        engine::pull_image(docker, source, scratch, control, [&node](const std::string& line) { log_line(node, line); });
    if (pulled.outcome == engine::PullResult::Outcome::cancelled) return {};
    if (pulled.outcome == engine::PullResult::Outcome::failed) {
        return {-1, with_message(failure_info(pull_failure_code(pulled.message), "The container image " + source.reference + " could not be pulled"),
                                 pulled.message),
                nullptr};
    }
    std::vector<std::string> options;
    if (const std::string run_options = settings.value("containerRunOptions", ""); run_options.find_first_not_of(" \t\n") != std::string::npos) {
        std::optional<std::vector<std::string>> words = split_command_line(run_options);
        if (!words) return {-1, failure_info("ContainerInvalidSettings", "The containerRunOptions have an unclosed quote"), nullptr};
        options = std::move(*words);
    }
    std::error_code ec;
    fs::create_directories(scratch, ec);
    const fs::path id_file = scratch / "container-id";
    engine::DockerRun run;
    run.name = name;
    run.owner = node.runtimes->owner();
    run.image = source.reference;
    run.binds.push_back({node.node_root, node.root_view});
    run.gpus = node.gpus;
    run.init = false;  // the task's program is the container's, as the service's `docker create` makes it
    if (settings.value("workingDirectory", "taskWorkingDirectory") != "containerImageDefault") run.cwd = view_of(node, dir / "wd");
    for (const auto& [variable, value] : env) {
        if (!engine::machine_variable(variable)) run.variables.push_back(variable);
    }
    run.options = {"--cidfile", id_file.string()};
    run.options.insert(run.options.end(), options.begin(), options.end());
    ContainerRun out;
    std::shared_ptr<engine::Process> process;
    try {
        process = control.start({engine::docker_run_command(docker, run, argv), client_environment(env), dir / "wd", dir / "stdout.txt",
                                 dir / "stderr.txt"});
    } catch (const std::exception& e) {
        fs::remove_all(scratch, ec);
        return {-1, with_message(failure_info("ContainerMiscError", "The container could not be started"), e.what()), nullptr};
    }
    const int code = process ? process->wait().code : -1;
    std::string id;
    std::ifstream(id_file) >> id;
    fs::remove_all(scratch, ec);
    const std::string error = code >= 125 && code <= 127 ? docker_error(dir / "stderr.txt") : "";
    // A killed client leaves its container running; one that could not start may stay made.
    if (!process || control.cancelled() || !error.empty()) remove_container(docker, name);
    if (!process || control.cancelled()) return {};
    if (!id.empty()) out.container = {{"containerId", id}, {"state", "exited"}};
    if (error.empty()) {
        out.exit_code = code;
        return out;
    }
    out.container["error"] = error;
    if (code == 125) {
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
            if (candidate.is_object() && server_key(text::string_member(candidate, "registryServer")) == source.registry) {
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

std::optional<json> prefetch_images(const json& configuration, const NodeContainers& node, engine::RunControl& control) {
    const json names = configuration.is_object() ? configuration.value("containerImageNames", json::array()) : json::array();
    if (!names.is_array() || names.empty()) return std::nullopt;
    if (!docker_chosen(node)) {
        const std::string why = !node.runtimes ? "no runtime"
                                : node.options.choice == engine::RuntimeChoice::host || node.options.choice == engine::RuntimeChoice::sandbox
                                    ? "--container-runtime is not docker"
                                    : node.runtimes->availability().docker_why;
        if (node.runtimes && node.options.choice == engine::RuntimeChoice::docker) {
            return json{{"code", "ContainerMiscError"},
                        {"message", "The node's container images could not be pulled"},
                        {"errorDetails", json::array({{{"name", "Message"}, {"value", "--container-runtime docker: " + why}}})}};
        }
        log_line(node, "containerImageNames not pulled: " + why);
        return std::nullopt;
    }
    for (const json& name : names) {
        if (!name.is_string()) continue;
        const engine::ImageSource source = batch_image_source(name.get<std::string>(), json(), node.registries);
        const engine::PullResult pulled = engine::pull_image(node.runtimes->docker(), source, node.scratch / "prefetch", control,
                                                             [&node](const std::string& line) { log_line(node, line); });
        if (pulled.outcome == engine::PullResult::Outcome::cancelled) return std::nullopt;
        if (pulled.outcome == engine::PullResult::Outcome::failed) {
            return json{{"code", pull_failure_code(pulled.message)},
                        {"message", "The container image " + source.reference + " could not be pulled"},
                        {"errorDetails", json::array({{{"name", "Message"}, {"value", pulled.message}}})}};
        }
    }
    return std::nullopt;
}

std::optional<ContainerRun> run_in_container(const json& settings, const engine::Environment& env, const fs::path& dir,
                                             engine::RunControl& control, const NodeContainers& node, const std::vector<std::string>& argv) {
    const std::string image = settings.value("imageName", "");
    const json properties{{"containerSettings", {{"imageSourceRegistry", {{"image", image}}}}}};
    const engine::RuntimeDecision decision =
        choose_runtime(properties, node.options, node.runtimes ? node.runtimes->availability() : engine::RuntimeAvailability{});
    if (!decision.error.empty()) {
        return ContainerRun{-1, with_message(failure_info("ContainerMiscError", "The container could not be started"), decision.error), nullptr};
    }
    if (decision.kind == engine::RuntimeKind::docker) return run_docker(settings, env, dir, control, node, argv);
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
