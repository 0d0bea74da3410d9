#include "emulator/node_login/login_command.h"

#include <filesystem>

#include "emulator/engine/node_gateway.h"
#include "emulator/engine/node_setup.h"

namespace bai::node_login {

namespace fs = std::filesystem;

std::vector<std::string> login_command(const engine::LoginNode& node, const std::string& command, const std::string& term,
                                       const std::string& step) {
    engine::Environment env = engine::node_base_environment(node.root);
    const fs::path home = node.root / "home";
    std::error_code ec;
    fs::create_directories(home, ec);
    env["HOME"] = home.string();
    env["AZ_BATCHAI_MOUNT_ROOT"] = (node.root / "mounts").string();
    std::string uuids;
    for (const std::string& uuid : node.gpus) uuids += (uuids.empty() ? "" : ",") + uuid;
    // On this machine the node's GPUs are named by UUID (the only way to keep CUDA to them).
    env["CUDA_VISIBLE_DEVICES"] = uuids;
    env["NVIDIA_VISIBLE_DEVICES"] = uuids.empty() ? "none" : uuids;
    env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
    if (!term.empty()) env["TERM"] = term;
    std::vector<std::string> wrapper;
    fs::path cwd = home;
    if (node.hosts) {
        wrapper = node.hosts->launch_prefix(node.node_id, step, node.root);
        cwd.clear();  // the launcher enters it on the host
    }
    const std::string script = engine::node_script(node.node_id, node.address, cwd, env, wrapper);
    // The script is sh's own argument: its $1 is the command, as when the gateway runs it from a file.
    return {"/bin/sh", "-c", script, "bai-node-login", command.empty() ? "exec /bin/bash -il" : command};
}

}  // namespace bai::node_login
