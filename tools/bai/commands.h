// The command groups of bai; each registers its subcommands and their callbacks on the app.
#pragma once

namespace CLI {
class App;
}

namespace bai::cli {

class CommandContext;

void add_workspace_commands(CLI::App& app, CommandContext& ctx);  // workspace, experiment, group
void add_cluster_commands(CLI::App& app, CommandContext& ctx);
void add_job_commands(CLI::App& app, CommandContext& ctx);
void add_file_server_commands(CLI::App& app, CommandContext& ctx);
void add_configure_command(CLI::App& app, CommandContext& ctx);

}  // namespace bai::cli
