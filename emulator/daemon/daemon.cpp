#include "emulator/daemon/daemon.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "common/db/database.h"
#include "common/endpoints/endpoints_file.h"
#include "common/http/listener.h"
#include "common/log/logger.h"
#include "common/version.h"
#include "emulator/arm/arm_api.h"
#include "emulator/daemon/daemon_state.h"
#include "emulator/daemon/data_dir_lock.h"
#include "emulator/engine/engine_routes.h"
#include "emulator/engine/local_engine.h"
#include "emulator/tls/self_signed_cert.h"
#include "fake_storage/accounts/account_registry.h"
#include "fake_storage/blob/blob_service.h"
#include "fake_storage/engine/blob_store.h"
#include "fake_storage/engine/file_store.h"
#include "fake_storage/file/file_service.h"
#include "fake_storage/engine/storage_schema.h"
#include "fuse_mounts/manager/mount_table.h"

namespace bai::daemon {
namespace {

namespace fs = std::filesystem;

int cannot_start(const std::string& reason) {
    std::fprintf(stderr, "batchai-emulator: %s\n", reason.c_str());
    log::write_to_file(log::Level::error, "not started: " + reason);
    return kExitCannotStart;
}

std::string url(const std::string& scheme, const std::string& host, int port) {
    std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
    return scheme + "://" + h + ":" + std::to_string(port);
}

void release_mounts(const fs::path& nodes_dir, const char* when) {
    for (const std::string& point : mounts::release_mounts_under(nodes_dir)) {
        log::warning(std::string("could not release mount ") + point + " " + when);
    }
}

// The emulator's own route on ARM: where the other endpoints are, for clients that know only ARM.
void add_endpoints_route(httplib::Server& server, const endpoints::Endpoints& e) {
    std::string body = nlohmann::json{{"arm", e.arm}, {"blob", e.blob}, {"file", e.file}}.dump();
    server.Get("/emulator/endpoints", [body](const httplib::Request&, httplib::Response& res) {
        res.set_content(body, "application/json");
    });
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

void print_banner(const fs::path& location, const endpoints::Endpoints& e,
                  const storage::Account& dev_account) {
    std::printf("batchai-emulator %s\n", kVersion);
    std::printf("  data directory  %s\n", location.c_str());
    std::printf("  ARM (HTTPS)     %s   (trust %s)\n", e.arm.c_str(), e.ca_cert.c_str());
    std::printf("  Blob            %s/%s\n", e.blob.c_str(), dev_account.name.c_str());
    std::printf("  File            %s/%s\n", e.file.c_str(), dev_account.name.c_str());
    std::printf("  endpoints       %s\n", (location / endpoints::kFileName).c_str());
    std::printf("\nexport REQUESTS_CA_BUNDLE=%s\n", e.ca_cert.c_str());
    std::printf("export AZURE_STORAGE_CONNECTION_STRING='%s'\n",
                storage::connection_string(dev_account, e.blob, e.file).c_str());
    std::printf("\nready (pid %ld); stop with Ctrl-C or SIGTERM\n", e.pid);
    std::fflush(stdout);
}

}  // namespace

int run(const Options& options) {
    std::error_code ec;
    fs::create_directories(options.location, ec);
    if (ec) return cannot_start("cannot create " + options.location.string() + ": " + ec.message());
    const fs::path location = fs::canonical(options.location);

    std::string reason;
    std::optional<DataDirLock> lock = DataDirLock::acquire(location, reason);
    if (!lock) return cannot_start(reason);

    log::open(location / "emulator.log");
    log::info(std::string("starting batchai-emulator ") + kVersion + " in " + location.string());
    const engine::GpuInventory gpus = engine::discover_gpus(options.gpus);
    log::info("GPUs: " + gpus.description);
    const fs::path nodes_dir = location / "nodes";
    release_mounts(nodes_dir, "left by a previous run");

    std::unique_ptr<db::Database> state;
    long run_id = 0;
    std::unique_ptr<storage::ContentFiles> content;
    try {
        state = db::Database::open(location / "state.db", {.synchronous_full = options.durable, .background_checkpoints = true});
        migrate_daemon_schema(*state);
        storage::migrate_storage_schema(*state);
        arm::ArmApi::migrate(*state);
        if (auto previous = last_run(*state); previous && !previous->stopped_cleanly) {
            log::warning("the previous run (pid " + std::to_string(previous->pid) +
                         ", started " + previous->started_at + ") did not stop cleanly");
        }
        run_id = record_start(*state, ::getpid(), kVersion);
        content = std::make_unique<storage::ContentFiles>(location / "storage", options.durable);
    } catch (const std::exception& e) {
        return cannot_start(std::string("state.db: ") + e.what());
    }

    storage::AccountRegistry accounts;
    for (const storage::Account& account : options.accounts) accounts.put(account);
    storage::BlobStore blob_store(*state, *content);
    storage::FileStore file_store(*state, *content);
    try {
        if (size_t replayed = file_store.recover(); replayed > 0) {
            log::info("applied " + std::to_string(replayed) + " file range writes left pending");
        }
        auto live = blob_store.live_content_ids();
        for (std::string& id : file_store.live_content_ids()) live.push_back(std::move(id));
        if (size_t swept = content->sweep({live.begin(), live.end()}); swept > 0) {
            log::info("removed " + std::to_string(swept) + " content files no metadata refers to");
        }
    } catch (const std::exception& e) {
        return cannot_start(std::string("storage: ") + e.what());
    }
    storage::BlobService blob_service(accounts, blob_store, *content);
    storage::FileService file_service(accounts, file_store, *content);
    engine::LocalEngine* job_engine = nullptr;
    arm::ArmApi arm_api(*state, accounts, file_store, blob_store, std::chrono::milliseconds(options.lro_delay_ms),
                        [&](arm::ResourceStore& store) {
                            engine::EngineOptions engine_options;
                            engine_options.nodes_dir = nodes_dir;
                            engine_options.gpus = gpus.gpus;
                            engine_options.autoscale_idle = std::chrono::milliseconds(options.autoscale_idle_ms);
                            engine_options.strict_gpus = options.strict_gpus;
                            engine_options.containers = options.containers;
                            auto made = std::make_unique<engine::LocalEngine>(store, engine::StorageAccess{file_store, blob_store, *content, content->temporary_dir(), {}}, engine_options);
                            job_engine = made.get();
                            return made;
                        });

    tls::CertificateFiles certificate;
    try {
        certificate = tls::ensure_certificate(location / "tls", options.host);
    } catch (const std::exception& e) {
        return cannot_start(e.what());
    }
    auto arm_server = std::make_unique<httplib::SSLServer>(certificate.certificate.c_str(),
                                                           certificate.private_key.c_str());
    if (!arm_server->is_valid()) return cannot_start("cannot load " + certificate.certificate.string());

    std::shared_ptr<http::RequestLog> request_log;
    if (options.debug_log) {
        try {
            request_log = std::make_shared<http::RequestLog>(*options.debug_log);
        } catch (const std::exception& e) {
            return cannot_start(e.what());
        }
    }
    std::vector<std::unique_ptr<http::Listener>> listeners;
    listeners.push_back(std::make_unique<http::Listener>("arm", std::move(arm_server), request_log));
    listeners.push_back(std::make_unique<http::Listener>(
        "blob", std::make_unique<httplib::Server>(), request_log));
    listeners.push_back(std::make_unique<http::Listener>(
        "file", std::make_unique<httplib::Server>(), request_log));
    http::Listener& arm = *listeners[0];
    http::Listener& blob = *listeners[1];
    http::Listener& file = *listeners[2];
    for (auto& listener : listeners) http::add_health_route(listener->server(), listener->name());
    blob_service.register_routes(blob.server());
    file_service.register_routes(file.server());

    if (!arm.bind(options.host, options.arm_port)) return cannot_start(arm.error());
    if (!blob.bind(options.host, options.blob_port)) return cannot_start(blob.error());
    if (!file.bind(options.host, options.file_port)) return cannot_start(file.error());

    endpoints::Endpoints published{url("https", options.host, arm.port()),
                                   url("http", options.host, blob.port()),
                                   url("http", options.host, file.port()),
                                   certificate.certificate.string(), static_cast<long>(::getpid())};
    add_endpoints_route(arm.server(), published);
    engine::add_engine_routes(arm.server(), *job_engine);
    try {
        arm_api.serve(arm.server(), {published.arm, published.blob, published.file});
    } catch (const std::exception& e) {
        return cannot_start(std::string("ARM: ") + e.what());
    }
    try {
        job_engine->start();
    } catch (const std::exception& e) {
        return cannot_start(std::string("job engine: ") + e.what());
    }
    for (auto& listener : listeners) listener->start();
    const fs::path endpoints_path = location / endpoints::kFileName;
    endpoints::write(endpoints_path, published);
    log::info("listening: arm " + published.arm + ", blob " + published.blob + ", file " +
              published.file);
    print_banner(location, published, *accounts.find(storage::kDevAccountName));

    int signal = wait_for_stop_signal();
    log::info(std::string("stopping on ") + (signal == SIGINT ? "SIGINT" : "SIGTERM"));
    fs::remove(endpoints_path, ec);
    for (auto& listener : listeners) listener->stop_accepting();
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    for (auto& listener : listeners) listener->finish(deadline);
    arm_api.stop();
    job_engine->stop();
    release_mounts(nodes_dir, "at stop");
    record_stop(*state, run_id);
    log::info("stopped cleanly");
    log::close();
    return 0;
}

}  // namespace bai::daemon
