// What a login runs on a node: its command (or a login shell) through the node's script
// (engine/node_gateway.h, node_script), as the node's other processes run. The node is the
// emulated VM, not a job's container: as on the service, where ssh reached the VM and a job's
// container was entered from there.
#pragma once

#include <string>
#include <vector>

#include "emulator/engine/node_logins.h"

namespace bai::node_login {

// The argv that runs `command` on the node (empty: an interactive login shell). Its environment
// is the node's (PATH, locale, TMPDIR of its own), with HOME the node's home/ (made here),
// AZ_BATCHAI_MOUNT_ROOT where the cluster's volumes are, the node's GPUs (CUDA_VISIBLE_DEVICES,
// NVIDIA_VISIBLE_DEVICES) and TERM when a terminal was asked for. On a Slurm host it runs as the
// node's step named `step`. Throws std::runtime_error when the node cannot run it (no host).
std::vector<std::string> login_command(const engine::LoginNode& node, const std::string& command, const std::string& term,
                                       const std::string& step);

}  // namespace bai::node_login
