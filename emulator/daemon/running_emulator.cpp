#include "emulator/daemon/running_emulator.h"

#include <unistd.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/crypto/random_id.h"
#include "common/db/database.h"
#include "common/http/lean_listener.h"
#include "common/http/routes.h"
#include "common/log/logger.h"
#include "common/memory/release_free_memory.h"
#include "common/version.h"
#include "emulator/arm/arm_api.h"
#include "emulator/batch/batch_api.h"
#include "emulator/batch/task_files.h"
#include "emulator/daemon/daemon_state.h"
#include "emulator/daemon/data_dir_access.h"
#include "emulator/daemon/data_dir_lock.h"
#include "emulator/engine/engine_routes.h"
#include "emulator/engine/slurm_hosts.h"
#include "emulator/daemon/host_programs.h"
#include "fake_storage/auth/sas_signer.h"
#include "emulator/portal/portal_actions.h"
#include "emulator/portal/portal_batch.h"
#include "emulator/portal/portal_routes.h"
#include "emulator/portal/portal_storage.h"
#include "emulator/identity/token_service.h"
#include "emulator/engine/local_engine.h"
#include "emulator/proxy/proxy_ca.h"
#include "emulator/proxy/proxy_front.h"
#include "emulator/tls/self_signed_cert.h"
#include "emulator/node_login/host_key.h"
#include "emulator/node_login/login_server.h"
#include "fake_storage/accounts/account_registry.h"
#include "fake_storage/blob/blob_service.h"
#include "fake_storage/engine/blob_store.h"
#include "fake_storage/engine/file_store.h"
#include "fake_storage/engine/storage_schema.h"
#include "fake_storage/file/file_service.h"
#include "fuse_mounts/manager/mount_table.h"

namespace bai::daemon {
namespace {

// --compute slurm: the nodes' hosts are Slurm allocations named after this data directory (its
// instance id, kept in DIR/slurm/instance), found and cancelled again by the next start.
std::shared_ptr<engine::NodeHosts> slurm_hosts(const Options& options, const std::filesystem::path& nodes_dir) {
    const std::filesystem::path location = nodes_dir.parent_path();
    engine::SlurmSettings settings;
    settings.partition = options.slurm_partition;
    settings.account = options.slurm_account;
    settings.lowpriority_partition = options.slurm_lowpriority_partition;
    settings.lowpriority_qos = options.slurm_lowpriority_qos;
    settings.sizes = options.slurm_sizes;
    settings.log_dir = location / "slurm";
    settings.shares_disk = !options.slurm_rest_storage;
    settings.docker_owner = nodes_dir.string();  // as the engine labels its containers (RuntimeProbe's owner)
    std::filesystem::create_directories(settings.log_dir);
    const std::filesystem::path id_file = settings.log_dir / "instance";
    std::ifstream in(id_file);
    std::getline(in, settings.instance);
    if (settings.instance.rfind("bai", 0) != 0 || settings.instance.size() != 11) {
        settings.instance = engine::slurm_instance_id(location, std::chrono::system_clock::now().time_since_epoch().count());
        std::ofstream(id_file) << settings.instance << "\n";
    }
    // The Slurm commands run with the emulator's own environment (SLURM_CONF, PATH, munge's socket).
    engine::Environment env;
    for (char** e = environ; *e; ++e) {
        const std::string entry = *e;
        const size_t equals = entry.find('=');
        if (equals != std::string::npos) env[entry.substr(0, equals)] = entry.substr(equals + 1);
    }
    return std::make_shared<engine::SlurmHosts>(settings, env);
}


namespace fs = std::filesystem;

// The SAS a host's mount of a container or share gets: for that volume alone, `letters` (read and
// list when read-only), as long as a node may live (the file that holds it goes with the node);
// "" for an account that does not exist.
std::function<std::string(const std::string&, const std::string&, bool)> volume_sas(storage::AccountRegistry& accounts,
                                                                                    storage::SasService service,
                                                                                    std::string letters) {
    return [&accounts, service, letters](const std::string& account, const std::string& volume, bool read_only) {
        std::optional<storage::Account> found = accounts.find(account);
        if (!found) return std::string();
        return storage::service_sas_query(*found, service, volume, "", read_only ? "rl" : letters,
                                          time::now() + std::chrono::hours(24 * 365));
    };
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
void add_endpoints_route(http::Routes& server, const endpoints::Endpoints& e) {
    std::string body = nlohmann::json{{"arm", e.arm},     {"blob", e.blob},         {"file", e.file},
                                      {"batch", e.batch}, {"proxy", e.proxy},       {"proxy_ca", e.proxy_ca},
                                      {"ca_bundle", e.ca_bundle}}.dump();
    server.Get("/emulator/endpoints", [body](const httplib::Request&, httplib::Response& res) {
        res.set_content(body, "application/json");
    });
}

// What uploads that were never committed hold, per account, and the blocks past their week.
void report_staged_blocks(storage::BlobStore& blobs) {
    for (const storage::StagedBlocks& held : blobs.staged_blocks_by_account()) {
        log::info("uncommitted blocks of " + held.account + ": " + std::to_string(held.bytes) + " bytes in " +
                  std::to_string(held.blocks) + " blocks of " + std::to_string(held.blobs) + " blobs");
    }
    storage::StagedBlocks dropped =
        blobs.discard_staged_before(blobs.clock_now() - storage::BlobStore::kStagedBlockLifetime);
    if (dropped.blocks > 0) {
        log::info("discarded " + std::to_string(dropped.bytes) + " bytes of uncommitted blocks (" +
                  std::to_string(dropped.blocks) + " blocks of " + std::to_string(dropped.blobs) +
                  " blobs) staged over a week ago");
    }
}

}  // namespace

// Declared in construction order: destroyed in the reverse one.
struct RunningEmulator::Parts {
    fs::path location;
    std::optional<DataDirLock> lock;
    fs::path nodes_dir;
    std::unique_ptr<db::Database> state;
    long run_id = 0;
    std::unique_ptr<storage::ContentFiles> content;
    storage::AccountRegistry accounts;
    std::unique_ptr<storage::BlobStore> blob_store;
    std::unique_ptr<storage::FileStore> file_store;
    std::unique_ptr<storage::BlobService> blob_service;
    std::unique_ptr<storage::FileService> file_service;
    // The nodes' ssh servers, told of the nodes by the engine (which outlives its last call).
    std::unique_ptr<node_login::LoginServer> logins;
    engine::LocalEngine* job_engine = nullptr;  // owned by arm_api
    std::unique_ptr<batch::BatchAccountRegistry> batch_accounts;
    std::unique_ptr<arm::ArmApi> arm_api;
    std::unique_ptr<batch::BatchApi> batch_api;
    std::unique_ptr<identity::TokenService> tokens;
    // ARM's routes (the emulator's own first, the Batch AI router last) and Batch's: the
    // listeners below serve them, so they are declared first and outlive them.
    http::Routes arm_routes;
    http::Routes batch_routes;
    // The public cloud's sign-in authority (login.microsoftonline.com through the proxy front
    // door) and the CA of the front door's certificates.
    http::Routes sign_in_routes;
    std::unique_ptr<proxy::ProxyCa> proxy_ca;
    std::vector<std::unique_ptr<http::Endpoint>> listeners;
    http::LeanListener* arm_listener = nullptr;  // one of listeners
    endpoints::Endpoints published;
    bool stopped = false;
};

std::unique_ptr<RunningEmulator> RunningEmulator::start(const Options& options, EngineHooks hooks) {
    auto p = std::make_unique<Parts>();
    try {
        create_private_dir(options.location);
    } catch (const std::exception& e) {
        throw StartError(e.what());
    }
    p->location = fs::canonical(options.location);
    // Before anything is written into it: earlier versions left it readable by every local user.
    std::vector<std::string> tightened;
    try {
        tightened = restrict_data_dir(p->location);
    } catch (const std::exception& e) {
        throw StartError(e.what());
    }

    std::string reason;
    std::optional<DataDirLock> acquired = DataDirLock::acquire(p->location, reason);
    if (!acquired) throw StartError(reason);
    p->lock.emplace(std::move(*acquired));

    log::open(p->location / "emulator.log");
    log::info(std::string("starting batchai-emulator ") + kVersion + " in " + p->location.string());
    for (const std::string& line : tightened) log::info("readable by its owner only now: " + line);
    const engine::GpuInventory gpus = engine::discover_gpus(options.gpus);
    log::info("GPUs: " + gpus.description);
    // One GPU to one node at a time, whether a Batch AI cluster's or a Batch pool's.
    auto gpu_pool = std::make_shared<engine::GpuPool>(gpus.gpus);
    p->nodes_dir = p->location / "nodes";
    release_mounts(p->nodes_dir, "left by a previous run");

    try {
        p->state = db::Database::open(p->location / "state.db",
                                      {.synchronous_full = options.durable,
                                       .exclusive = options.sole_user,
                                       .background_checkpoints = !options.sole_user});
        migrate_daemon_schema(*p->state);
        storage::migrate_storage_schema(*p->state);
        arm::ArmApi::migrate(*p->state);
        batch::BatchApi::migrate(*p->state);
        if (auto previous = last_run(*p->state); previous && !previous->stopped_cleanly) {
            log::warning("the previous run (pid " + std::to_string(previous->pid) + ", started " +
                         previous->started_at + ") did not stop cleanly");
        }
        p->run_id = record_start(*p->state, ::getpid(), kVersion);
        p->content = std::make_unique<storage::ContentFiles>(p->location / "storage", options.durable);
    } catch (const std::exception& e) {
        throw StartError(std::string("state.db: ") + e.what());
    }

    for (const storage::Account& account : options.accounts) p->accounts.put(account);
    p->blob_store = std::make_unique<storage::BlobStore>(*p->state, *p->content);
    if (hooks.clock) p->blob_store->set_clock([clock = hooks.clock] { return clock->now(); });
    p->file_store = std::make_unique<storage::FileStore>(*p->state, *p->content);
    try {
        if (size_t replayed = p->file_store->recover(); replayed > 0) {
            log::info("applied " + std::to_string(replayed) + " file range writes left pending");
        }
        auto live = p->blob_store->live_content_ids();
        for (std::string& id : p->file_store->live_content_ids()) live.push_back(std::move(id));
        if (size_t swept = p->content->sweep({live.begin(), live.end()}); swept > 0) {
            log::info("removed " + std::to_string(swept) + " content files no metadata refers to");
        }
        report_staged_blocks(*p->blob_store);
    } catch (const std::exception& e) {
        throw StartError(std::string("storage: ") + e.what());
    }
    p->blob_service = std::make_unique<storage::BlobService>(p->accounts, *p->blob_store, *p->content,
                                                             p->blob_store->service_settings());
    p->file_service = std::make_unique<storage::FileService>(p->accounts, *p->file_store, *p->content,
                                                             p->blob_store->service_settings());
    p->blob_service->set_faults(hooks.blob_faults);
    p->file_service->set_faults(hooks.file_faults);
    Parts& parts = *p;
    if (!hooks.clock) {  // (a replay on a virtual clock serves no network logins)
        try {
            const fs::path key = node_login::ensure_host_key(p->location / "ssh");
            p->logins = std::make_unique<node_login::LoginServer>(key);
            log::info("node logins: ssh host key " + node_login::host_key_fingerprint(key));
        } catch (const std::exception& e) {
            log::warning(std::string("the nodes have no ssh server: ") + e.what());
        }
    }
    p->batch_accounts = std::make_unique<batch::BatchAccountRegistry>(batch::batch_accounts(options.batch_accounts));
    p->arm_api = std::make_unique<arm::ArmApi>(
        *p->state, p->accounts, *p->file_store, *p->blob_store, *p->batch_accounts,
        std::chrono::milliseconds(options.lro_delay_ms),
        [&parts, &options, &gpus, gpu_pool, hooks](arm::ResourceStore& store) {
            engine::EngineOptions engine_options;
            engine_options.nodes_dir = parts.nodes_dir;
            engine_options.gpus = gpus.gpus;
            engine_options.gpu_pool = gpu_pool;
            engine_options.autoscale_idle = std::chrono::milliseconds(options.autoscale_idle_ms);
            engine_options.strict_gpus = options.strict_gpus;
            engine_options.share_passthrough = options.share_passthrough;
            engine_options.bind_shares = options.bind_shares;
            if (options.slurm) {
                // (A Slurm host sees the shares' directories on the shared filesystem, not this
                // process's mounts: the engine links them for nodes on hosts.)
                engine_options.hosts = slurm_hosts(options, parts.nodes_dir);
            }
            engine_options.containers = options.containers;
            engine_options.clock = hooks.clock;
            engine_options.workloads = hooks.workloads;
            engine_options.trace = hooks.trace;
            engine_options.logins = parts.logins.get();
            if (hooks.observe) store.observe(hooks.observe);
            engine::StorageAccess storage{*parts.file_store, *parts.blob_store, *parts.content,
                                          parts.content->temporary_dir(), {}, {}};
            if (options.slurm) {
                // Hosts that do not see this machine's mounts mount blob containers themselves,
                // through the Blob endpoint, each with a SAS for its container.
                std::string why;
                storage.remote_blobs.program = publish_host_program(parts.location, "bai-blobfuse", why);
                if (!why.empty()) log::warning("blob containers cannot be mounted on Slurm hosts that do not share this machine's mounts: " + why);
                storage.remote_blobs.endpoint = [&parts, given = options.slurm_blob_endpoint] {
                    return given.empty() ? parts.published.blob : given;
                };
                storage.remote_blobs.sas = volume_sas(parts.accounts, storage::SasService::blob, "racwdl");
            }
            if (options.slurm_rest_storage) {
                // Hosts that do not see the store's directories mount the shares through the File
                // endpoint, each with a SAS for its share.
                engine_options.remote_shares = true;
                std::string why;
                storage.remote_shares.program = publish_host_program(parts.location, "bai-sharefuse", why);
                if (!why.empty()) log::warning("file shares cannot be mounted on the Slurm hosts: " + why);
                storage.remote_shares.endpoint = [&parts, given = options.slurm_file_endpoint] {
                    return given.empty() ? parts.published.file : given;
                };
                storage.remote_shares.sas = volume_sas(parts.accounts, storage::SasService::file, "rcwdl");
            }
            auto made = std::make_unique<engine::LocalEngine>(store, std::move(storage), engine_options);
            parts.job_engine = made.get();
            return made;
        });

    tls::CertificateFiles certificate;
    try {
        certificate = tls::ensure_certificate(p->location / "tls", std::vector<std::string>{options.host, options.url_host()});
        // What this start created (the database, its WAL, the log, the key) gets the same modes.
        restrict_data_dir(p->location);
    } catch (const std::exception& e) {
        throw StartError(e.what());
    }
    http::TlsContext tls;
    try {
        tls = http::make_server_tls(certificate.certificate.string(), certificate.private_key.string());
    } catch (const std::exception& e) {
        throw StartError(e.what());
    }

    std::shared_ptr<http::RequestLog> request_log;
    if (options.debug_log) {
        try {
            request_log = std::make_shared<http::RequestLog>(*options.debug_log);
        } catch (const std::exception& e) {
            throw StartError(e.what());
        }
    }
    // ARM takes bodies up to 64 MiB (and answers those over 4 MiB with its own CloudError), Batch
    // up to 4 MiB (the service refuses task collections over 1 MB); larger ones are refused with
    // 413 before they are read.
    // Each service's handler serves its own endpoint and the proxy front door alike.
    const http::LeanListener::Handler arm_handler = http::serve_routes(p->arm_routes, 64u << 20);
    auto arm_listener = std::make_unique<http::LeanListener>("arm", arm_handler, request_log);
    arm_listener->use_tls(tls);
    try {
        // A key this directory has is read now (a bad one stops the start); a new one is made
        // when first needed.
        const std::filesystem::path identity_dir = p->location / "identity";
        std::function<identity::SigningKey()> make_key = [identity_dir] { return identity::load_or_create_signing_key(identity_dir); };
        if (std::filesystem::exists(identity_dir / "signing-key.pem")) {
            make_key = [key = identity::load_or_create_signing_key(identity_dir)] { return key; };
        }
        p->tokens = std::make_unique<identity::TokenService>(std::move(make_key), identity::ServicePrincipals(options.service_principals));
    } catch (const std::exception& e) {
        throw StartError(e.what());
    }
    batch::NodeOptions batch_nodes;
    batch_nodes.clock = hooks.clock;
    batch_nodes.workloads = hooks.workloads;
    batch_nodes.images = options.containers.images;
    batch_nodes.container_runtime = options.containers.choice;
    batch_nodes.strict_images = options.containers.strict_images;
    batch_nodes.gpus = gpu_pool;
    batch_nodes.trace = hooks.trace;
    batch_nodes.packages = options.batch_applications;
    {  // ssh between the nodes of a multi-instance task: bai-node-ssh, built beside the emulator
        std::error_code ec;
        const std::filesystem::path beside = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path() / "bai-node-ssh";
        if (!ec && std::filesystem::is_regular_file(beside, ec)) batch_nodes.node_ssh = beside;
    }
    p->batch_api = std::make_unique<batch::BatchApi>(*p->state, *p->batch_accounts,
                                                     p->location / "batch-nodes", std::move(batch_nodes));
    if (options.strict_auth) {
        p->batch_api->require_signed_tokens(*p->tokens);
        // Storage's bearer-only operations (Get User Delegation Key) take the sign-in service's
        // tokens for Storage only; the device code and refresh grants are refused (no secret).
        auto storage_token = [tokens = p->tokens.get()](const std::string& token) {
            return tokens->verify(token, {"https://storage.azure.com/", "https://storage.azure.com"}).check ==
                   identity::TokenCheck::valid;
        };
        p->blob_service->set_token_check(storage_token);
        p->file_service->set_token_check(storage_token);
        p->tokens->refuse_user_sign_in();
    }
    // Plain HTTP (the SDKs' clients are given http:// URLs) and HTTPS (az batch prefixes https://
    // to the accountEndpoint) on one port.
    const http::LeanListener::Handler batch_handler = http::serve_routes(p->batch_routes, 4u << 20, p->batch_api->path_rewrite());
    auto batch_owned = std::make_unique<http::LeanListener>("batch", batch_handler, request_log);
    batch_owned->use_tls(tls, true);
    http::Endpoint& arm = *arm_listener;
    p->arm_listener = arm_listener.get();
    http::Endpoint& batch_listener = *batch_owned;
    auto storage_handler = [](auto& service) -> http::LeanListener::Handler {
        return [&service](const httplib::Request& req, httplib::Response& res, const httplib::ContentReader* body) {
            service->serve(req, res, body);
        };
    };
    const http::LeanListener::Handler blob_handler = storage_handler(parts.blob_service);
    const http::LeanListener::Handler file_handler = storage_handler(parts.file_service);
    auto blob_owned = std::make_unique<http::LeanListener>("blob", blob_handler, request_log);
    auto file_owned = std::make_unique<http::LeanListener>("file", file_handler, request_log);
    http::Endpoint& blob = *blob_owned;
    http::Endpoint& file = *file_owned;
    // The proxy front door: Azure's host names, each served by the handler of its service's
    // endpoint (the same checks of keys, SAS and tokens), the sign-in authority by routes of its own.
    try {
        p->proxy_ca = std::make_unique<proxy::ProxyCa>(p->location / "proxy");
    } catch (const std::exception& e) {
        throw StartError(std::string("proxy CA: ") + e.what());
    }
    auto proxy_owned = std::make_unique<http::LeanListener>(
        "proxy",
        proxy::proxy_handler({arm_handler, http::serve_routes(p->sign_in_routes, 1u << 20), blob_handler, file_handler,
                              batch_handler}),
        request_log);
    proxy_owned->open_tunnels(proxy::tunnel_opener(*p->proxy_ca));
    proxy_owned->refuse_when_full();
    http::Endpoint& proxy_listener = *proxy_owned;
    p->listeners.push_back(std::move(arm_listener));
    p->listeners.push_back(std::move(blob_owned));
    p->listeners.push_back(std::move(file_owned));
    p->listeners.push_back(std::move(batch_owned));
    p->listeners.push_back(std::move(proxy_owned));

    const std::string listen = options.listen_address();
    if (!arm.bind(listen, options.arm_port)) throw StartError(arm.error());
    if (!blob.bind(listen, options.blob_port)) throw StartError(blob.error());
    if (!file.bind(listen, options.file_port)) throw StartError(file.error());
    p->file_service->set_blob_source(p->blob_store.get(), blob.port());  // Copy File from a blob
    if (!batch_listener.bind(listen, options.batch_port)) throw StartError(batch_listener.error());
    if (!proxy_listener.bind(listen, options.proxy_port)) throw StartError(proxy_listener.error());

    // The URLs handed out name --public-host where given; what runs here (the Batch nodes'
    // downloads) reaches the endpoints on --host.
    const std::string shown = options.url_host();
    p->published = {url("https", shown, arm.port()), url("http", shown, blob.port()),
                    url("http", shown, file.port()), certificate.certificate.string(),
                    static_cast<long>(::getpid()), url("http", shown, batch_listener.port()),
                    url("http", shown, proxy_listener.port()), p->proxy_ca->certificate_path().string()};
    const std::string local_blob = url("http", options.host, blob.port());
    try {
        p->published.ca_bundle = proxy::write_trust_bundle(p->location / "proxy", *p->proxy_ca, certificate.certificate).string();
    } catch (const std::exception& e) {
        throw StartError(std::string("proxy CA bundle: ") + e.what());
    }
    add_endpoints_route(p->arm_routes, p->published);
    batch::set_local_blob_endpoint(local_blob, p->published.blob);
    identity::add_identity_routes(p->arm_routes, *p->tokens, p->published.arm);
    identity::add_identity_routes(p->sign_in_routes, *p->tokens, identity::kPublicAuthority);
    engine::add_engine_routes(p->arm_routes, *p->job_engine);
    if (!options.strict_auth) {
        const std::string portal_token = crypto::random_hex(16);
        portal::add_action_routes(p->arm_routes, {p->arm_routes,
                                                  [engine = p->job_engine](const std::string& node) { return engine->preempt(node); },
                                                  [engine = p->job_engine](const std::string& node) { return engine->fail(node); },
                                                  portal_token});
        portal::add_storage_routes(p->arm_routes,
                                   {p->accounts, *p->blob_store, *p->file_store, *p->content, p->published, portal_token});
    }
    if (!options.strict_auth) {
        const std::string batch_url = p->published.batch;
        portal::add_batch_routes(p->arm_routes, {p->batch_routes, *p->batch_accounts, p->batch_api->path_rewrite(),
                                                 batch_url.substr(batch_url.find("://") + 3)});
    }
    portal::add_portal_routes(p->arm_routes,
                              {p->arm_api->store(), p->accounts, p->published, p->location,
                               [engine = p->job_engine] { return engine->nodes(); },
                               [engine = p->job_engine](const std::string& kind, const std::string& key) {
                                   return kind == arm::kind::kCluster ? engine->history().of_cluster(key)
                                                                      : engine->history().of_job(key);
                               },
                               [engine = p->job_engine](const std::string& key) -> std::optional<portal::NodeLogsPlace> {
                                   if (auto logs = engine->stdouterr_directory(key)) return portal::NodeLogsPlace{logs->anchor, logs->relative};
                                   return std::nullopt;
                               },
                               p->file_store.get(),
                               p->blob_store.get()},
                              !options.strict_auth);
    p->batch_api->serve(p->batch_routes, p->published.batch);
    try {
        if (options.strict_auth) p->arm_api->require_signed_tokens(*p->tokens);
        p->arm_api->serve(p->arm_routes, {p->published.arm, p->published.blob, p->published.file, p->published.batch});
    } catch (const std::exception& e) {
        throw StartError(std::string("ARM: ") + e.what());
    }
    p->batch_api->start();
    if (hooks.clock) hooks.clock->quiesce();  // one engine's threads at a time (clock.h)
    try {
        p->job_engine->start();
    } catch (const std::exception& e) {
        throw StartError(std::string("job engine: ") + e.what());
    }
    // What starting read and let go (recovery reads queued and running jobs, the storage sweep
    // every content id) goes back to the system before the daemon idles.
    memory::release_free_memory();
    for (auto& listener : p->listeners) listener->start();
    endpoints::write(p->location / endpoints::kFileName, p->published);
    log::info("listening: arm " + p->published.arm + ", blob " + p->published.blob + ", file " + p->published.file +
              ", batch " + p->published.batch + ", proxy " + p->published.proxy);
    return std::unique_ptr<RunningEmulator>(new RunningEmulator(std::move(p)));
}

RunningEmulator::RunningEmulator(std::unique_ptr<Parts> parts) : parts_(std::move(parts)) {}

RunningEmulator::~RunningEmulator() { stop(); }

const endpoints::Endpoints& RunningEmulator::endpoints() const { return parts_->published; }
const fs::path& RunningEmulator::location() const { return parts_->location; }
engine::LocalEngine& RunningEmulator::engine() { return *parts_->job_engine; }
httplib::Response RunningEmulator::answer_arm(httplib::Request request) {
    const std::string& base = parts_->published.arm;  // https://HOST:PORT
    if (!request.has_header("Host")) request.set_header("Host", base.substr(base.find("//") + 2));
    httplib::Response response;
    parts_->arm_listener->answer(request, response);
    return response;
}

bool RunningEmulator::operations_idle() const { return parts_->arm_api->operations_idle(); }

bool RunningEmulator::wait_operations_idle(std::chrono::steady_clock::time_point until) const {
    return parts_->arm_api->wait_operations_idle(until);
}

std::string RunningEmulator::dev_connection_string() const {
    return storage::connection_string(*parts_->accounts.find(storage::kDevAccountName), parts_->published.blob,
                                      parts_->published.file);
}

void RunningEmulator::stop() {
    Parts& p = *parts_;
    if (p.stopped) return;
    p.stopped = true;
    std::error_code ec;
    fs::remove(p.location / endpoints::kFileName, ec);
    for (auto& listener : p.listeners) listener->stop_accepting();
    p.blob_service->stop_waiting();
    p.file_service->stop_waiting();
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    for (auto& listener : p.listeners) listener->finish(deadline);
    p.arm_api->stop();
    if (p.logins) p.logins->stop();  // (the nodes' commands end before the nodes do)
    p.job_engine->stop();
    p.batch_api->stop();
    release_mounts(p.nodes_dir, "at stop");
    record_stop(*p.state, p.run_id);
    log::info("stopped cleanly");
}

}  // namespace bai::daemon
