#include "tools/bai/env_command.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/text/shell_quote.h"
#include "tools/bai/cli_error.h"
#include "tools/bai/endpoint_resolution.h"
#include "tools/bai/http_client.h"

namespace bai::cli {
namespace {

// Loopback never goes through the proxy: the emulator's own endpoints, and anything else local.
constexpr const char* kNoProxy = "localhost,127.0.0.1,::1,127.0.0.0/8";

endpoints::Endpoints find_proxy(const TargetFlags& flags) {
    std::string reason;
    std::optional<Target> target = resolve_target(flags, reason);
    if (!target) throw CliError(reason, 1);
    endpoints::Endpoints e = target->endpoints;
    if (e.proxy.empty() || e.ca_bundle.empty()) discover_storage_endpoints(e);
    if (e.proxy.empty() || e.ca_bundle.empty()) {
        throw CliError("the emulator found at " + target->source + " has no proxy front door (it answers no proxy "
                       "address: an older version, or it is not running)", 1);
    }
    return e;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> proxy_environment(const endpoints::Endpoints& e) {
    // Upper and lower case: curl reads https_proxy and no_proxy, Python and Go either.
    return {{"HTTPS_PROXY", e.proxy},       {"https_proxy", e.proxy},         {"NO_PROXY", kNoProxy},
            {"no_proxy", kNoProxy},         {"REQUESTS_CA_BUNDLE", e.ca_bundle}, {"SSL_CERT_FILE", e.ca_bundle},
            {"CURL_CA_BUNDLE", e.ca_bundle}, {"NODE_EXTRA_CA_CERTS", e.ca_bundle}};
}

void add_env_commands(CLI::App& app, GlobalOptions& options) {
    auto unset = std::make_shared<bool>(false);
    CLI::App* env = app.add_subcommand(
        "env", "Print the exports that route this shell through the emulator's proxy front door: eval \"$(bai env)\"");
    env->add_flag("--unset", *unset, "Print the lines that undo them instead");
    env->callback([&options, unset] {
        if (*unset) {
            for (const auto& [name, value] : proxy_environment(endpoints::Endpoints{})) std::printf("unset %s\n", name.c_str());
            return;
        }
        const endpoints::Endpoints e = find_proxy(options.target);
        for (const auto& [name, value] : proxy_environment(e)) {
            std::printf("export %s=%s\n", name.c_str(), text::shell_quote(value).c_str());
        }
        if (::isatty(STDOUT_FILENO)) {
            std::fprintf(stderr,
                         "bai: run eval \"$(bai env)\" to apply these. Azure's host names then reach the emulator "
                         "(%s); the proxy refuses every other https host: bai exec -- CMD routes one command only.\n",
                         e.proxy.c_str());
        }
    });

    auto command = std::make_shared<std::vector<std::string>>();
    CLI::App* exec = app.add_subcommand("exec", "Run one command routed through the emulator's proxy front door: "
                                                "bai exec -- az storage share list --account-name NAME");
    exec->add_option("command", *command, "The command and its arguments (after --)")->required();
    exec->callback([&options, command] {
        const endpoints::Endpoints e = find_proxy(options.target);
        for (const auto& [name, value] : proxy_environment(e)) ::setenv(name.c_str(), value.c_str(), 1);
        std::vector<char*> argv;
        for (std::string& word : *command) argv.push_back(word.data());
        argv.push_back(nullptr);
        std::fflush(stdout);
        ::execvp(argv[0], argv.data());
        throw CliError("cannot run " + (*command)[0] + ": " + std::strerror(errno), errno == ENOENT ? 127 : 126);
    });
}

}  // namespace bai::cli
