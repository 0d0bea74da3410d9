#include "emulator/identity/service_principals.h"
#include "emulator/daemon/daemon.h"

#include <signal.h>

#include <cstdio>
#include <memory>

#include "common/endpoints/endpoints_file.h"
#include "common/endpoints/user_pointer.h"
#include "common/log/logger.h"
#include "common/version.h"
#include "emulator/batch/batch_account.h"
#include "emulator/daemon/running_emulator.h"
#include "fake_storage/accounts/account_registry.h"

namespace bai::daemon {
namespace {

namespace fs = std::filesystem;

int cannot_start(const std::string& reason) {
    std::fprintf(stderr, "batchai-emulator: %s\n", reason.c_str());
    log::write_to_file(log::Level::error, "not started: " + reason);
    return kExitCannotStart;
}

int wait_for_stop_signal() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    int signal = 0;
    sigwait(&set, &signal);
    return signal;
}

void print_banner(const fs::path& location, const endpoints::Endpoints& e, const std::string& connection,
                  bool portal) {
    std::printf("batchai-emulator %s\n", kVersion);
    std::printf("  data directory  %s\n", location.c_str());
    std::printf("  ARM (HTTPS)     %s   (trust %s)\n", e.arm.c_str(), e.ca_cert.c_str());
    std::printf("  Blob            %s/%s\n", e.blob.c_str(), std::string(storage::kDevAccountName).c_str());
    std::printf("  File            %s/%s\n", e.file.c_str(), std::string(storage::kDevAccountName).c_str());
    std::printf("  Batch           %s   (account %s)\n", e.batch.c_str(), std::string(batch::kDevBatchAccountName).c_str());
    if (!e.proxy.empty()) {
        std::printf("  proxy           %s   (Azure's host names; trust %s; eval \"$(bai env)\")\n", e.proxy.c_str(),
                    e.proxy_ca.c_str());
    }
    std::printf("  sign-in         %s/adfs   (tenant %s)\n", e.arm.c_str(), identity::kTenantId);
    std::printf("                  service principal %s, secret %s\n", identity::kWellKnownClientId,
                identity::kWellKnownClientSecret);
    std::printf("  subscription    %s\n", identity::kDefaultSubscriptionId);
    if (portal) std::printf("  portal          %s/portal   (in a browser; it trusts the certificate above once told to)\n", e.arm.c_str());
    std::printf("  endpoints       %s\n", (location / endpoints::kFileName).c_str());
    std::printf("\nexport REQUESTS_CA_BUNDLE=%s\n", e.ca_cert.c_str());
    std::printf("export AZURE_STORAGE_CONNECTION_STRING='%s'\n", connection.c_str());
    std::printf("\nready (pid %ld); stop with Ctrl-C or SIGTERM\n", e.pid);
    std::fflush(stdout);
}

// bai finds this emulator from any directory through the pointer (common/endpoints/user_pointer.h).
// An emulator that cannot make it still serves: bai then needs --data-dir or the default ports.
std::optional<fs::path> publish_user_pointer(const fs::path& endpoints_file) {
    std::optional<fs::path> pointer = endpoints::pointer_path();
    if (!pointer) return std::nullopt;
    try {
        endpoints::publish_pointer(*pointer, endpoints_file);
    } catch (const std::exception& e) {
        log::warning(std::string("no pointer for bai: ") + e.what());
        return std::nullopt;
    }
    return pointer;
}

}  // namespace

int run(const Options& options) {
    std::unique_ptr<RunningEmulator> emulator;
    try {
        emulator = RunningEmulator::start(options);
    } catch (const StartError& e) {
        return cannot_start(e.what());
    }
    const fs::path endpoints_file = fs::absolute(emulator->location() / endpoints::kFileName);
    const std::optional<fs::path> pointer = publish_user_pointer(endpoints_file);
    print_banner(emulator->location(), emulator->endpoints(), emulator->dev_connection_string(), !options.strict_auth);

    int signal = wait_for_stop_signal();
    log::info(std::string("stopping on ") + (signal == SIGINT ? "SIGINT" : "SIGTERM"));
    if (pointer) endpoints::withdraw_pointer(*pointer, endpoints_file);
    emulator->stop();
    log::close();
    return 0;
}

}  // namespace bai::daemon
