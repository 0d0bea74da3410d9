// bai: the az batchai command line against the emulator, for machines without az, job validate and
// submit, and what az's batchai module lacks (its flat preview commands, through the az extension).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "common/version.h"
#include "tools/bai/az_login_command.h"
#include "tools/bai/cli_error.h"
#include "tools/bai/command_context.h"
#include "tools/bai/env_command.h"
#include "tools/bai/commands.h"
#include "tools/bai/json_query.h"
#include "tools/bai/status_command.h"

int main(int argc, char** argv) {
    using namespace bai::cli;
    GlobalOptions options;
    CommandContext ctx(options);

    CLI::App app("bai: the az batchai commands against the Batch AI emulator", "bai");
    app.fallthrough();  // -o, --query and the emulator flags may come after the command
    app.require_subcommand(1);
    app.set_version_flag("--version", std::string("bai ") + bai::kVersion);
    app.add_option("--endpoint", options.target.endpoint, "The emulator's ARM endpoint (or $BATCHAI_EMULATOR_ENDPOINT)");
    app.add_option("--data-dir", options.target.location,
                   "The emulator's data directory, whose endpoints.json says where it listens (default ./batchai-data)");
    app.add_option("--ca-cert", options.target.ca_cert, "Certificate to trust for ARM (default: endpoints.json's)");
    app.add_option("-o,--output", options.output, "json (default), jsonc, table, tsv or none");
    app.add_option("--query", options.query, "A JMESPath query applied to the result, e.g. jobOutputDirectoryPathSegment");
    app.add_option("--subscription", options.subscription, "Subscription id (default: $AZURE_SUBSCRIPTION_ID, then "
                                                           "the configured default, then the emulator's default subscription)");

    CLI::App* status = app.add_subcommand("status", "Whether each endpoint of the emulator answers.");
    int status_code = 0;
    status->callback([&] { status_code = run_status(options.target); });
    add_configure_command(app, ctx);
    add_az_login_commands(app, options);
    add_env_commands(app, options);
    add_workspace_commands(app, ctx);
    add_cluster_commands(app, ctx);
    add_job_commands(app, ctx);
    add_file_server_commands(app, ctx);

    // -o and --query are checked before any command runs (nothing is created with a bad -o).
    app.parse_complete_callback([&] {
        if (!options.output.empty()) parse_output_format(options.output);
        if (!options.query.empty()) query_json(nullptr, options.query);
    });

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::fprintf(stderr, "bai: error: %s\nRun with --help for the commands and their flags.\n", e.what());
        return kExitUsage;
    } catch (const CliError& e) {
        ctx.end_progress();
        if (*e.what() != '\0') std::fprintf(stderr, "ERROR: %s\n", e.what());
        return e.exit_code;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "ERROR: %s\n", e.what());
        return 1;
    }
    return status_code;
}
