// The flags that many bai commands share, spelled as the az batchai commands spelled them.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "tools/bai/admin_user.h"
#include "tools/bai/command_context.h"

namespace bai::cli {

inline void add_group_flag(CLI::App* c, std::string& value) {
    c->add_option("-g,--resource-group", value, "Name of the resource group (default: bai configure --defaults group=)");
}
inline void add_workspace_flag(CLI::App* c, std::string& value) {
    c->add_option("-w,--workspace", value, "Name of the workspace (default: bai configure --defaults workspace=)");
}
inline void add_experiment_flag(CLI::App* c, std::string& value) {
    c->add_option("-e,--experiment", value, "Name of the experiment (default: bai configure --defaults experiment=)");
}
inline void add_location_flag(CLI::App* c, std::string& value) {
    c->add_option("-l,--location", value, "Location (default: the resource group's)");
}
inline void add_yes_flag(CLI::App* c, bool& value) {
    c->add_flag("-y,--yes", value, "Do not prompt for confirmation");
}
inline void add_no_wait_flag(CLI::App* c, bool& value) {
    c->add_flag("--no-wait", value, "Do not wait for the long-running operation to finish");
}
inline void add_admin_flags(CLI::App* c, AdminFlags& f) {
    c->add_option("-u,--user-name", f.user, "Admin user name (default: the current user)");
    c->add_option("-p,--password", f.password, "Admin user password");
    c->add_option("-k,--ssh-key", f.ssh_key, "Admin SSH public key, or a file holding it");
    c->add_flag("--generate-ssh-keys", f.generate_ssh_keys, "Create ~/.ssh/id_rsa[.pub] if missing and use them");
}

}  // namespace bai::cli
