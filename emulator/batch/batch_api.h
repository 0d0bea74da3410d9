// The Azure Batch service's data-plane API on its own endpoint (--batch-port, plain HTTP and HTTPS
// on the same port): SharedKey and bearer-token authentication per account (batch_auth.h), OData
// errors, pools and their compute nodes (batch_api.cpp, batch_node_routes.cpp), jobs and tasks
// (batch_work_routes.cpp), and their files. Routes are under the account's URL as the SDK builds
// them (https://ACCOUNT.REGION.batch.azure.com/pools?api-version=...): here either the endpoint's
// root, the account then coming from the SharedKey header, or HOST:PORT/ACCOUNT, the account's
// accountEndpoint.
#pragma once

#include <httplib.h>

#include "common/http/routes.h"

#include <memory>
#include <string>
#include <vector>

#include "common/db/database.h"
#include "emulator/batch/batch_account.h"
#include "emulator/batch/pool_nodes.h"
#include "emulator/batch/entity_store.h"
#include "emulator/identity/token_service.h"

namespace bai::batch {

class BatchApi {
public:
    // The nodes' directories go under `nodes_root`.
    BatchApi(db::Database& db, const BatchAccountRegistry& accounts, std::filesystem::path nodes_root, NodeOptions options = {});
    static void migrate(db::Database& db);
    // `base_url`: where the endpoint listens (http://127.0.0.1:P), for the documents' urls (https
    // for a request that came over TLS, with /ACCOUNT when its path had it).
    void serve(http::Routes& server, const std::string& base_url);
    // What the endpoint's listener runs on each request before routing it (take_account_from_path).
    std::function<void(httplib::Request&)> path_rewrite() const;
    // --strict-auth: bearer tokens must be `tokens`' own, unexpired, for Batch (before serve()).
    void require_signed_tokens(const identity::TokenService& tokens) { tokens_ = &tokens; }
    // The pools' nodes: start brings every pool's nodes up (they do not survive a restart).
    void start();
    void stop();

private:
    using Handler = std::function<void(const BatchAccount&, const httplib::Request&, httplib::Response&)>;
    // `versioned`: the service's routes want an api-version; the emulator's own do not.
    void route(http::Routes& server, const std::string& method, const std::string& pattern, Handler handler,
               bool versioned = true);

    void add_pool(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void get_pool(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void pool_exists(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void list_pools(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void patch_pool(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void delete_pool(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void resize_pool(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void enable_autoscale(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void disable_autoscale(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void evaluate_autoscale_route(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    // Stop resize, update properties, node counts, supported images (pool_actions.cpp).
    void serve_pool_actions(http::Routes& server);
    void stop_resize(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void update_pool_properties(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void list_node_counts(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    // Certificates (certificate_routes.cpp).
    void serve_certificates(http::Routes& server);
    void add_certificate(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void get_certificate(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void delete_certificate(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void cancel_certificate_deletion(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    StoredEntity need_certificate(const BatchAccount& account, const httplib::Request& req) const;
    // Applications (application_routes.cpp).
    void serve_applications(http::Routes& server);
    // Lifetime statistics and usage metrics (usage_routes.cpp).
    void serve_usage(http::Routes& server);
    // Job schedules (job_schedule_routes.cpp).
    void serve_job_schedules(http::Routes& server);
    void add_job_schedule(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void get_job_schedule(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void change_job_schedule(const BatchAccount& account, const httplib::Request& req, httplib::Response& res, bool replace);
    void move_job_schedule_state(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void delete_job_schedule(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void list_schedule_jobs(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    StoredEntity need_job_schedule(const BatchAccount& account, const std::string& id) const;
    nlohmann::json schedule_view(const httplib::Request& req, const StoredEntity& schedule, const std::string& url) const;
    // Compute nodes (batch_node_routes.cpp).
    void serve_nodes(http::Routes& server);
    void list_nodes(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void get_node(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void reboot_node(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void set_node_scheduling(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void remove_nodes(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void list_node_files(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void get_node_file(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void delete_node_file(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void preempt_node(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void add_node_user(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void update_node_user(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void delete_node_user(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void remote_login(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void node_extensions(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    // uploadbatchservicelogs (node_logs.cpp).
    void upload_node_logs(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    std::filesystem::path need_node_root(const BatchAccount& account, const std::string& pool_id, const std::string& node_id) const;
    // Jobs and tasks (batch_work_routes.cpp).
    void add_job(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void get_job(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void list_jobs(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void delete_job(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void change_job(const BatchAccount& account, const httplib::Request& req, httplib::Response& res, bool replace);
    void move_job_state(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void count_job_tasks(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void list_job_task_status(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void add_task(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void add_task_collection(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void get_task(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void list_tasks(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void update_task(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void delete_task(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void terminate_task(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void reactivate_task(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void list_task_files(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void get_task_file(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    void delete_task_file(const BatchAccount& account, const httplib::Request& req, httplib::Response& res);
    StoredEntity need_task(const BatchAccount& account, const std::string& job_id, const std::string& task_id) const;
    nlohmann::json task_view(const httplib::Request& req, const StoredEntity& task, const std::string& url) const;
    void serve_work(http::Routes& server);
    StoredEntity need_job(const BatchAccount& account, const std::string& id) const;
    // Adds a checked task to a job; the entity added, or nullopt when one of that id exists.
    std::optional<StoredEntity> put_task(const BatchAccount& account, const StoredEntity& job, const nlohmann::json& body);
    // A page of a scope's entities as the service lists them, the url of each under `path`
    // (`shape`: how one is shown at its url, view() when not given; `keep`: which of the scope's
    // the list has, all when not given).
    using Shape = std::function<nlohmann::json(const StoredEntity&, const std::string& url)>;
    using Keep = std::function<bool(const StoredEntity&)>;
    void send_list(const BatchAccount& account, const httplib::Request& req, httplib::Response& res,
                   const std::string& scope, const std::string& path, const std::string& metadata,
                   const Shape& shape = {}, const Keep& keep = {});
    nlohmann::json view(const StoredEntity& entity, const std::string& url) const;

    // (With its statistics, "stats", when the request asks $expand=stats.)
    nlohmann::json pool_view(const httplib::Request& req, const StoredEntity& pool);
    nlohmann::json job_view(const httplib::Request& req, const StoredEntity& job);
    // The account's URL as this request addressed it (see serve()).
    std::string base_url(const httplib::Request& req) const;
    StoredEntity need_pool(const BatchAccount& account, const std::string& id) const;

    EntityStore store_;
    AppPackages packages_;  // before nodes_, which is made from the same options
    PoolNodes nodes_;
    const BatchAccountRegistry& accounts_;
    std::string host_port_;  // 127.0.0.1:P
    const identity::TokenService* tokens_ = nullptr;
};

}  // namespace bai::batch
