#include "emulator/batch/batch_api.h"

#include "common/http/lean_listener.h"
#include "common/http/proxied_host.h"
#include "common/crypto/random_id.h"
#include "common/log/logger.h"
#include "common/text/ascii.h"
#include "common/time/timestamps.h"
#include "emulator/batch/autoscale_formula.h"
#include "emulator/batch/batch_error.h"
#include "emulator/batch/body_properties.h"
#include "emulator/batch/batch_http.h"
#include "emulator/batch/odata_query.h"
#include "emulator/batch/batch_auth.h"
#include "emulator/batch/pool_rules.h"
#include "emulator/batch/usage_stats.h"

namespace bai::batch {

using nlohmann::json;

BatchApi::BatchApi(db::Database& db, const BatchAccountRegistry& accounts, std::filesystem::path nodes_root,
                   NodeOptions options)
    : store_(db), packages_(options.packages), nodes_(store_, std::move(nodes_root), std::move(options)), accounts_(accounts) {}

void BatchApi::start() { nodes_.start(); }
void BatchApi::stop() { nodes_.stop(); }

void BatchApi::migrate(db::Database& db) { EntityStore::migrate(db); }

void BatchApi::route(http::Routes& server, const std::string& method, const std::string& pattern, Handler handler,
                     bool versioned) {
    auto wrapped = [this, handler, versioned](const httplib::Request& req, httplib::Response& res) {
        try {
            if (versioned && !req.has_param("api-version")) {
                throw BatchError(400, "MissingRequiredQueryParameter", "A query parameter that's mandatory for this request is not specified.",
                                 {{"QueryParameterName", "api-version"}});
            }
            // Every answer names its request, as the service's do (clients quote it to support).
            res.set_header("request-id", crypto::uuid4());
            BatchAccount account = authenticate(req, accounts_, tokens_);
            if (req.has_header("client-request-id") && req.get_header_value("return-client-request-id") == "true") {
                res.set_header("client-request-id", req.get_header_value("client-request-id"));
            }
            res.set_header("DataServiceVersion", "3.0");
            handler(account, req, res);
            // An action (POST .../resize, .../disablescheduling) names itself, as the service's do.
            // (Not uploadbatchservicelogs, whose answer is a document and has none, as recorded.)
            if (req.method == "POST" && res.status < 300 && !res.has_header("DataServiceId") &&
                !req.path.ends_with("/uploadbatchservicelogs")) {
                res.set_header("DataServiceId", base_url(req) + req.path);
            }
        } catch (const BatchError& e) {
            write_error(res, e, base_url(req));
        } catch (const std::exception& e) {
            log::error(std::string("batch ") + req.method + " " + req.path + ": " + e.what());
            write_error(res, BatchError(500, "InternalServerError", std::string("The server encountered an internal error: ") + e.what()),
                        base_url(req));
        }
    };
    if (method == "GET") server.Get(pattern, wrapped);
    if (method == "POST") server.Post(pattern, wrapped);
    if (method == "PATCH") server.Patch(pattern, wrapped);
    if (method == "DELETE") server.Delete(pattern, wrapped);
    if (method == "PUT") server.Put(pattern, wrapped);
}

std::function<void(httplib::Request&)> BatchApi::path_rewrite() const {
    return [this](httplib::Request& req) { take_account_from_path(req, accounts_); };
}

std::string BatchApi::base_url(const httplib::Request& req) const {
    std::string out = http::LeanListener::serving_tls() ? "https://" : "http://";
    // Through the proxy front door, at the account's own host name: the cloud's URLs.
    if (const std::string& host = http::proxied_host(); host.ends_with(".batch.azure.com")) return out + host;
    out += host_port_;
    if (std::string in_path = req.get_header_value(kPathAccountHeader); !in_path.empty()) out += "/" + in_path;
    return out;
}

void BatchApi::serve(http::Routes& server, const std::string& base_url) {
    const size_t scheme_end = base_url.find("://");
    host_port_ = scheme_end == std::string::npos ? base_url : base_url.substr(scheme_end + 3);
    route(server, "POST", "/pools", [this](auto& a, auto& q, auto& r) { add_pool(a, q, r); });
    route(server, "GET", "/pools", [this](auto& a, auto& q, auto& r) { list_pools(a, q, r); });
    // httplib hands HEAD (the SDK's exists) to the GET route.
    route(server, "GET", R"(/pools/([^/]+))", [this](auto& a, auto& q, auto& r) {
        q.method == "HEAD" ? pool_exists(a, q, r) : get_pool(a, q, r);
    });
    route(server, "PATCH", R"(/pools/([^/]+))", [this](auto& a, auto& q, auto& r) { patch_pool(a, q, r); });
    route(server, "DELETE", R"(/pools/([^/]+))", [this](auto& a, auto& q, auto& r) { delete_pool(a, q, r); });
    route(server, "POST", R"(/pools/([^/]+)/resize)", [this](auto& a, auto& q, auto& r) { resize_pool(a, q, r); });
    route(server, "POST", R"(/pools/([^/]+)/enableautoscale)", [this](auto& a, auto& q, auto& r) { enable_autoscale(a, q, r); });
    route(server, "POST", R"(/pools/([^/]+)/disableautoscale)", [this](auto& a, auto& q, auto& r) { disable_autoscale(a, q, r); });
    route(server, "POST", R"(/pools/([^/]+)/evaluateautoscale)",
          [this](auto& a, auto& q, auto& r) { evaluate_autoscale_route(a, q, r); });
    serve_pool_actions(server);
    serve_certificates(server);
    serve_job_schedules(server);
    serve_usage(server);
    serve_applications(server);
    serve_nodes(server);
    serve_work(server);
}

namespace {

// The service never shows a secret it was given: a user account's password, a container
// registry's, a mount's account key, SAS key or password (a pool's, or an auto pool's in a job).
void hide_secrets(json& doc, bool secret_holder = false) {
    if (doc.is_object()) {
        for (auto& [name, value] : doc.items()) {
            const bool holder = name == "userAccounts" || name == "containerRegistries" || name == "registry" ||
                                name == "mountConfiguration";
            hide_secrets(value, secret_holder || holder);
        }
        if (secret_holder) {
            for (const char* secret : {"password", "accountKey", "sasKey"}) doc.erase(secret);
        }
    } else if (doc.is_array()) {
        for (json& item : doc) hide_secrets(item, secret_holder);
    }
}

}  // namespace

json BatchApi::view(const StoredEntity& entity, const std::string& url) const {
    json out = json::object();
    for (const auto& [name, value] : entity.body.items()) {
        if (name.empty() || name[0] != '_') out[name] = value;  // "_..." fields are the emulator's own
    }
    hide_secrets(out);
    out["url"] = url;
    out["eTag"] = entity.etag;
    out["lastModified"] = time::format_iso8601(time::from_ticks(entity.modified_ticks));
    return out;
}

json BatchApi::pool_view(const httplib::Request& req, const StoredEntity& pool) {
    const std::string url = base_url(req) + "/pools/" + pool.body.value("id", "");
    json out = view(pool, url);
    if (expands_stats(req)) {
        std::vector<NodeSession> sessions;
        for (NodeSession& s : nodes_.node_sessions(pool.account)) {
            if (text::iequals(s.pool_id, pool.body.value("id", ""))) sessions.push_back(std::move(s));
        }
        json record{{"startTime", pool.body.value("creationTime", "")}};
        out["stats"] = pool_statistics(sessions, record, url + "/stats", nodes_.now());
    }
    return out;
}

StoredEntity BatchApi::need_pool(const BatchAccount& account, const std::string& id) const {
    std::optional<StoredEntity> pool = store_.get(account.name, kPools, id);
    if (!pool) throw BatchError(404, "PoolNotFound", "The specified pool does not exist.");
    return *pool;
}

void BatchApi::add_pool(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    json body = parse_body(req);
    check_pool_to_add(body);
    refuse_unknown_properties(body, "PoolAddParameter");
    check_pool_network(body, [this](const std::string& id) { return store_.arm_document(id); });
    packages_.check_references(account.name, body.value("applicationPackageReferences", json::array()), "applicationPackageReferences");
    json pool = new_pool_document(body, time::format_iso8601(time::now()));
    if (!store_.add(account.name, kPools, pool)) throw BatchError(409, "PoolExists", "The specified pool already exists.");
    nodes_.pool_changed(account.name, body["id"]);
    send_created(res, need_pool(account, body["id"]), base_url(req) + "/pools/" + body["id"].get<std::string>());
}

void BatchApi::get_pool(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    StoredEntity pool = need_pool(account, req.matches[1]);
    if (answered_not_modified(req, res, pool)) return;
    json view = pool_view(req, pool);
    if (std::optional<std::vector<std::string>> fields = select_of(req)) view = select_fields(view, *fields);
    view["odata.metadata"] = base_url(req) + "/$metadata#pools/@Element";
    set_entity_headers(res, pool);
    res.set_content(view.dump(), "application/json;odata=minimalmetadata");
}

void BatchApi::pool_exists(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    std::optional<StoredEntity> pool = store_.get(account.name, kPools, req.matches[1]);
    if (pool && answered_not_modified(req, res, *pool)) return;
    res.status = pool ? 200 : 404;
    if (pool) set_entity_headers(res, *pool);
}

void BatchApi::list_pools(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    send_list(account, req, res, kPools, "/pools", "pools", [this, &req](const StoredEntity& pool, const std::string&) {
        return pool_view(req, pool);
    });
}

void BatchApi::send_list(const BatchAccount& account, const httplib::Request& req, httplib::Response& res,
                         const std::string& scope, const std::string& path, const std::string& metadata,
                         const Shape& shape, const Keep& keep) {
    const Page page = page_of(req);
    const std::optional<odata::Filter> filter = filter_of(req);
    const std::optional<std::vector<std::string>> fields = select_of(req);
    // The store's pages in id order until this page has `limit` entities that pass the filter.
    json value = json::array();
    std::string cursor = page.after;
    std::optional<std::string> next;
    for (bool more = true; more && static_cast<int>(value.size()) < page.limit;) {
        std::optional<std::string> store_next;
        std::vector<StoredEntity> chunk = store_.list(account.name, scope, cursor, page.limit, store_next);
        more = store_next.has_value();
        for (size_t i = 0; i < chunk.size(); ++i) {
            const StoredEntity& entity = chunk[i];
            cursor = text::lower(entity.body.value("id", ""));
            if (keep && !keep(entity)) continue;
            const std::string url = base_url(req) + path + "/" + entity.body.value("id", "");
            json shown = shape ? shape(entity, url) : view(entity, url);
            if (filter && !filter->matches(shown)) continue;
            value.push_back(fields ? select_fields(shown, *fields) : std::move(shown));
            if (static_cast<int>(value.size()) == page.limit) {
                if (i + 1 < chunk.size() || more) next = cursor;
                break;
            }
        }
    }
    json body{{"odata.metadata", base_url(req) + "/$metadata#" + metadata}, {"value", value}};
    if (next) body["odata.nextLink"] = next_link(req, base_url(req) + path, page.limit, *next);
    res.set_content(body.dump(), "application/json;odata=minimalmetadata");
}

void BatchApi::patch_pool(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    json body = parse_body(req);
    const std::string id = req.matches[1];
    check_conditions(req, need_pool(account, id));
    packages_.check_references(account.name, body.value("applicationPackageReferences", json::array()), "applicationPackageReferences");
    if (body.contains("startTask") && !body["startTask"].is_null()) {
        if (!body["startTask"].is_object() || !body["startTask"].contains("commandLine")) {
            throw missing_property("startTask.commandLine");
        }
    }
    for (const auto& [name, value] : body.items()) {
        if (name != "startTask" && name != "metadata" && name != "applicationPackageReferences" &&
            name != "certificateReferences" && name != "targetNodeCommunicationMode") {
            throw invalid_property(name, value.dump(), "This property cannot be updated with a patch");
        }
    }
    refuse_unknown_properties(body, "PoolPatchParameter");
    std::optional<StoredEntity> pool = store_.update(account.name, kPools, id, [&](json& doc) {
        for (const auto& [name, value] : body.items()) {
            if (value.is_null()) {
                doc.erase(name);
            } else {
                doc[name] = value;
            }
        }
        return true;
    });
    if (!pool) throw BatchError(404, "PoolNotFound", "The specified pool does not exist.");
    set_entity_headers(res, *pool);
    res.set_header("DataServiceId", base_url(req) + "/pools/" + pool->body.value("id", ""));
    res.status = 200;
}

// The pool is `deleting` until its nodes have left; then it is gone.
void BatchApi::delete_pool(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    const std::string id = req.matches[1];
    if (has_conditions(req)) check_conditions(req, need_pool(account, id));
    std::optional<StoredEntity> pool = store_.update(account.name, kPools, id, [](json& doc) {
        if (doc.value("state", "") == "deleting") return false;
        doc["state"] = "deleting";
        doc["stateTransitionTime"] = time::format_iso8601(time::now());
        return true;
    });
    if (!pool) throw BatchError(404, "PoolNotFound", "The specified pool does not exist.");
    nodes_.pool_deleting(account.name, id);
    res.status = 202;
}

void BatchApi::resize_pool(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    json body = parse_body(req);
    const std::string id = req.matches[1];
    StoredEntity pool = need_pool(account, id);
    check_conditions(req, pool);
    if (pool.body.value("enableAutoScale", false)) {
        throw BatchError(409, "PoolIsAutoScaleEnabled", "The specified pool has automatic scaling enabled: it cannot be resized.");
    }
    if (pool.body.value("state", "") == "deleting") throw BatchError(409, "PoolBeingDeleted", "The specified pool is being deleted.");
    for (const char* target : {"targetDedicatedNodes", "targetLowPriorityNodes"}) {
        if (body.contains(target) && (!body[target].is_number_integer() || body[target].get<long long>() < 0)) {
            throw invalid_property(target, body[target].dump(), "The value must be an integer of 0 or more");
        }
    }
    refuse_unknown_properties(body, "PoolResizeParameter");
    const std::string deallocation =
        option_of(body, "nodeDeallocationOption", {"requeue", "terminate", "taskcompletion", "retaineddata"});
    std::optional<StoredEntity> updated = store_.update(account.name, kPools, id, [&](json& doc) {
        for (const char* field : {"targetDedicatedNodes", "targetLowPriorityNodes", "resizeTimeout"}) {
            if (body.contains(field)) doc[field] = body[field];
        }
        doc["_deallocation"] = deallocation;
        doc.erase("_resizeStopped");  // a new resize goes on where a stopped one ended
        doc.erase("resizeErrors");
        doc["allocationState"] = "resizing";
        doc["allocationStateTransitionTime"] = time::format_iso8601(time::now());
        doc["_allocating"] = true;
        return true;
    });
    nodes_.pool_changed(account.name, id);
    set_entity_headers(res, *updated);
    res.status = 202;
}

void BatchApi::enable_autoscale(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    json body = parse_body(req);
    const std::string id = req.matches[1];
    StoredEntity pool = need_pool(account, id);
    check_conditions(req, pool);
    std::string formula = body.value("autoScaleFormula", pool.body.value("autoScaleFormula", ""));
    if (formula.empty()) throw missing_property("autoScaleFormula");
    check_evaluation_interval(body);
    refuse_unknown_properties(body, "PoolEnableAutoScaleParameter");
    AutoScaleResult check = evaluate_autoscale(formula, metrics_at(0));
    if (check.error) {
        throw BatchError(400, "InvalidAutoScaleFormula", "The specified autoscale formula is not valid.",
                         {{"PropertyName", "autoScaleFormula"}, {"Reason", *check.error}});
    }
    std::optional<StoredEntity> updated = store_.update(account.name, kPools, id, [&](json& doc) {
        doc["enableAutoScale"] = true;
        doc["autoScaleFormula"] = formula;
        doc["autoScaleEvaluationInterval"] = body.value("autoScaleEvaluationInterval", doc.value("autoScaleEvaluationInterval", "PT15M"));
        return true;
    });
    nodes_.pool_changed(account.name, id);
    set_entity_headers(res, *updated);
}

void BatchApi::disable_autoscale(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    const std::string id = req.matches[1];
    need_pool(account, id);
    std::optional<StoredEntity> updated = store_.update(account.name, kPools, id, [&](json& doc) {
        doc["enableAutoScale"] = false;
        doc.erase("autoScaleFormula");
        doc.erase("autoScaleEvaluationInterval");
        doc.erase("autoScaleRun");
        return true;
    });
    set_entity_headers(res, *updated);
}

// The formula over the pool's present metrics, without acting on it (the service requires auto
// scaling to be enabled on the pool: 409 AutoScaleNotEnabled, a name chosen here).
void BatchApi::evaluate_autoscale_route(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    json body = parse_body(req);
    const std::string id = req.matches[1];
    StoredEntity pool = need_pool(account, id);
    if (!pool.body.value("enableAutoScale", false)) {
        throw BatchError(409, "AutoScaleNotEnabled", "Automatic scaling is not enabled on the specified pool.");
    }
    if (!body.contains("autoScaleFormula") || !body["autoScaleFormula"].is_string()) throw missing_property("autoScaleFormula");
    refuse_unknown_properties(body, "PoolEvaluateAutoScaleParameter");
    AutoScaleResult r = nodes_.try_formula(account.name, id, body["autoScaleFormula"]);
    json run{{"timestamp", time::format_iso8601(time::now())}};
    if (r.error) {
        run["error"] = {{"code", "AutoScalingFormulaEvaluationError"}, {"message", *r.error}};
    } else {
        run["results"] = r.results;
    }
    run["odata.metadata"] = base_url(req) + "/$metadata#Microsoft.Azure.Batch.Protocol.Entities.AutoScaleRun";
    res.set_content(run.dump(), "application/json;odata=minimalmetadata");
}

}  // namespace bai::batch
