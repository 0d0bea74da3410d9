#include "tools/bai/az_login_command.h"

#include <boost/process.hpp>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>

#include "emulator/identity/service_principals.h"
#include "tools/bai/az_extension.h"
#include "tools/bai/cli_error.h"
#include "tools/bai/endpoint_resolution.h"

namespace bai::cli {
namespace {

namespace bp = boost::process;

struct AzResult {
    int exit_code = 0;
    std::string err;
};

// Runs az with `args` (its standard output discarded, its errors kept), trusting `ca_cert`.
// /usr/bin/env finds az on PATH; the variables go through bai's own environment (a short-lived
// process), which the child inherits.
AzResult run_az(const std::vector<std::string>& args, const std::string& ca_cert) {
    if (!ca_cert.empty()) ::setenv("REQUESTS_CA_BUNDLE", ca_cert.c_str(), 1);
    ::setenv("AZURE_CORE_COLLECT_TELEMETRY", "no", 1);
    std::vector<std::string> argv{"az"};
    argv.insert(argv.end(), args.begin(), args.end());
    bp::ipstream err;
    std::error_code ec;
    bp::child child(bp::exe = "/usr/bin/env", bp::args = argv, bp::std_in < bp::null, bp::std_out > bp::null,
                    bp::std_err > err, ec);
    if (ec) throw CliError("cannot run az: " + ec.message(), 1);
    std::ostringstream text;
    std::string line;
    while (std::getline(err, line)) text << line << "\n";
    child.wait();
    if (child.exit_code() == 127) throw CliError("the az CLI is not installed (Debian: apt-get install azure-cli)", 1);
    return {child.exit_code(), text.str()};
}

void require_ok(const AzResult& r, const std::string& what) {
    if (r.exit_code != 0) throw CliError(what + " failed:\n" + r.err, 1);
}

// The cloud's endpoints: ARM and the sign-in authority are the emulator's; the resource ids are
// the public cloud's (the tokens' audiences, which the emulator's services expect); the storage
// suffix is the public cloud's too (connection strings name the emulator's endpoints beside it).
std::string cloud_config(const std::string& arm) {
    nlohmann::json config{{"endpoints",
                           {{"resource_manager", arm + "/"},
                            {"active_directory", arm},
                            {"active_directory_resource_id", "https://management.core.windows.net/"},
                            {"active_directory_graph_resource_id", "https://graph.windows.net/"},
                            {"microsoft_graph_resource_id", "https://graph.microsoft.com/"},
                            {"management", "https://management.core.windows.net/"},
                            {"batch_resource_id", "https://batch.core.windows.net/"}}},
                          {"suffixes", {{"storage_endpoint", "core.windows.net"}}}};
    return config.dump();
}

int az_login(const TargetFlags& flags, const std::string& principal_flag) {
    std::string reason;
    std::optional<Target> target = resolve_target(flags, reason);
    if (!target) throw CliError(reason, 1);
    const endpoints::Endpoints& e = target->endpoints;
    identity::ServicePrincipal principal{identity::kWellKnownClientId, identity::kWellKnownClientSecret};
    if (!principal_flag.empty()) {
        try {
            principal = identity::parse_service_principal(principal_flag);
        } catch (const std::invalid_argument& error) {
            throw CliError(error.what(), kExitUsage);
        }
    }
    const std::string config = cloud_config(e.arm);
    const bool known = run_az({"cloud", "show", "-n", kEmulatorCloudName, "-o", "none"}, e.ca_cert).exit_code == 0;
    if (known) {
        require_ok(run_az({"cloud", "update", "-n", kEmulatorCloudName, "--cloud-config", config}, e.ca_cert),
                   "az cloud update");
    } else {
        require_ok(run_az({"cloud", "register", "-n", kEmulatorCloudName, "--cloud-config", config}, e.ca_cert),
                   "az cloud register");
    }
    require_ok(run_az({"cloud", "set", "-n", kEmulatorCloudName}, e.ca_cert), "az cloud set");
    require_ok(run_az({"login", "--service-principal", "-u", principal.client_id, "-p", principal.secret, "--tenant",
                       "adfs", "-o", "none"},
                      e.ca_cert),
               "az login");
    std::fprintf(stderr, "az: cloud %s (ARM %s) active, signed in as %s, subscription %s\n", kEmulatorCloudName,
                 e.arm.c_str(), principal.client_id.c_str(), identity::kDefaultSubscriptionId);
    std::fprintf(stderr, "az: extension %s (the first releases' flat az batchai commands) in %s\n", kAzExtensionName,
                 install_az_extension().c_str());
    // The bundle (the system's CAs, the proxy's and the ARM endpoint's) where the emulator has one:
    // az then reaches the emulator both ways, and other hosts as before.
    std::printf("export REQUESTS_CA_BUNDLE=%s\n", (e.ca_bundle.empty() ? e.ca_cert : e.ca_bundle).c_str());
    return 0;
}

int az_logout() {
    require_ok(run_az({"cloud", "set", "-n", "AzureCloud"}, ""), "az cloud set");
    std::fprintf(stderr, "az: cloud AzureCloud active again (unset REQUESTS_CA_BUNDLE to reach it)\n");
    return 0;
}

}  // namespace

void add_az_login_commands(CLI::App& app, GlobalOptions& options) {
    auto principal = std::make_shared<std::string>();
    CLI::App* login = app.add_subcommand(
        "az-login", "Point the az CLI at the emulator: register the cloud BatchAIEmulator, make it active, sign in.");
    login->add_option("--service-principal", *principal,
                      "ID:SECRET of a principal the emulator knows (default: its well-known one)");
    login->callback([&options, principal] { az_login(options.target, *principal); });
    CLI::App* logout = app.add_subcommand("az-logout", "Make the az CLI's AzureCloud the active cloud again.");
    logout->callback([] { az_logout(); });
}

}  // namespace bai::cli
