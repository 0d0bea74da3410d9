#include "emulator/engine/docker_client.h"

#include <cctype>
#include <cstdlib>

#include "emulator/engine/node_setup.h"
#include "emulator/engine/process.h"

namespace bai::engine {

std::vector<std::string> docker_run_command(const std::string& docker, const DockerRun& run,
                                            const std::vector<std::string>& command) {
    std::vector<std::string> argv{docker, "run"};
    argv.insert(argv.end(), run.options.begin(), run.options.end());
    argv.insert(argv.end(), {"--rm", "--name", run.name, "--network", "host"});
    if (run.init) argv.push_back("--init");
    if (!run.cidfile.empty()) argv.insert(argv.end(), {"--cidfile", run.cidfile});
    if (!run.owner.empty()) argv.insert(argv.end(), {"--label", std::string(kOwnerLabel).append("=").append(run.owner)});
    if (!run.allocation.empty()) argv.insert(argv.end(), {"--label", std::string(kAllocationLabel).append("=").append(run.allocation)});
    // Appends: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string here.
    for (const SandboxBind& bind : run.binds) {
        argv.insert(argv.end(), {"--volume", bind.host.string().append(":").append(bind.view).append(bind.read_only ? ":ro" : "")});
    }
    if (!run.gpus.empty()) {
        std::string devices = "device=";
        for (size_t i = 0; i < run.gpus.size(); ++i) devices.append(i ? "," : "").append(run.gpus[i]);
        // docker's --gpus takes a CSV field: the quotes keep its commas inside one value.
        argv.insert(argv.end(), {"--gpus", std::string("\"").append(devices).append("\"")});
    }
    if (run.shm_bytes) argv.insert(argv.end(), {"--shm-size", std::to_string(*run.shm_bytes)});
    if (!run.cwd.empty()) argv.insert(argv.end(), {"--workdir", run.cwd});
    for (const std::string& name : run.variables) argv.insert(argv.end(), {"--env", name});
    argv.push_back(run.image);
    argv.insert(argv.end(), command.begin(), command.end());
    return argv;
}

std::vector<std::string> docker_start_command(const std::string& docker, const DockerRun& run) {
    DockerRun container = run;
    container.variables.clear();  // each process brings its own
    std::vector<std::string> argv = docker_run_command(docker, container, {"/bin/sh", "-c", "while :; do sleep 3600; done"});
    argv.insert(argv.begin() + 2, "--detach");
    return argv;
}

std::vector<std::string> docker_exec_command(const std::string& docker, const std::string& name, const std::string& cwd,
                                             const std::vector<std::string>& variables) {
    std::vector<std::string> argv{docker, "exec"};
    if (!cwd.empty()) argv.insert(argv.end(), {"--workdir", cwd});
    for (const std::string& variable : variables) argv.insert(argv.end(), {"--env", variable});
    argv.push_back(name);
    return argv;
}

bool machine_variable(const std::string& name) {
    return name == "PATH" || name == "HOME" || name == "USER" || name == "LOGNAME" || name == "SHELL" || name == "TMPDIR";
}

Environment docker_environment() {
    Environment env = node_base_environment();
    for (const char* name : {"DOCKER_HOST", "DOCKER_CONTEXT", "DOCKER_CONFIG", "DOCKER_CERT_PATH", "DOCKER_TLS_VERIFY"}) {
        if (const char* value = std::getenv(name)) env[name] = value;
    }
    return env;
}

void remove_owned_containers(const std::string& docker, const std::string& owner) {
    Environment env = docker_environment();
    // Through the environment, not the script's text: no quoting of a path to get wrong.
    env["BAI_DOCKER"] = docker;
    env["BAI_OWNER_FILTER"] = std::string("label=").append(kOwnerLabel).append("=").append(owner);
    const std::string script =
        "ids=$(\"$BAI_DOCKER\" ps --all --quiet --filter \"$BAI_OWNER_FILTER\") || exit 0; "
        "[ -z \"$ids\" ] || \"$BAI_DOCKER\" rm --force $ids";
    try {
        Process::start({{"timeout", "30", "/bin/sh", "-c", script}, env, "/", "/dev/null", "/dev/null"})->wait();
    } catch (const std::exception&) {
        // no docker to ask: nothing of ours can be there
    }
}

std::string docker_name(const std::string& text) {
    std::string name;
    for (char c : text) {
        bool ok = std::isalnum(static_cast<unsigned char>(c)) || ((c == '_' || c == '.' || c == '-') && !name.empty());
        name.push_back(ok ? c : '-');
    }
    if (!name.empty() && std::isalnum(static_cast<unsigned char>(name[0]))) return name;
    return std::string("c").append(name);
}

}  // namespace bai::engine
