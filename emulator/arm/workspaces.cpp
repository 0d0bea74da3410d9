#include "emulator/arm/workspaces.h"

#include "emulator/arm/batchai_common.h"
#include "emulator/arm/batchai_view.h"
#include "emulator/arm/cloud_error.h"
#include "emulator/arm/resource_defaults.h"
#include "emulator/arm/resource_ids.h"
#include "emulator/arm/resource_view.h"
#include "emulator/arm/text.h"

namespace bai::arm {
namespace {

using validation::ApiVersion;
using validation::ResourceKind;

constexpr const char* kWorkspaces = "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.BatchAI/workspaces";
const std::string kWorkspace = std::string(kWorkspaces) + "/{workspaceName}";
const std::string kExperiments = kWorkspace + "/experiments";
const std::string kExperiment = kExperiments + "/{experimentName}";


nlohmann::json new_workspace(const std::string& id, const std::string& name, const nlohmann::json& location,
                             const nlohmann::json& tags) {
    // `tags` only where the client sent some, as the service answered.
    nlohmann::json w{{"id", id}, {"name", name}, {"type", "Microsoft.BatchAI/workspaces"}, {"location", location},
                     {"properties", nlohmann::json::object()}};
    if (tags.is_object()) w["tags"] = tags;
    stamp_new(w["properties"], "succeeded");
    return w;
}

void put_workspace(ArmContext& ctx, const ArmRequest& req, const Params& p, httplib::Response& res) {
    StoredResource group = require_group(ctx, p);
    nlohmann::json body = req.json_body().value_or(nlohmann::json::object());
    check_body(body, ResourceKind::workspace, ApiVersion::v2018_05_01);
    const std::string id = workspace_id(p);
    nlohmann::json tags = body.contains("tags") ? body["tags"] : nlohmann::json();
    if (auto existing = ctx.store.get(id)) {
        if (lower(existing->body["location"].get<std::string>()) != lower(body["location"].get<std::string>())) {
            throw bad_request("LocationNotAvailableForResourceType",
                              "The workspace " + p["workspaceName"] + " exists in location '" +
                                  existing->body["location"].get<std::string>() + "'; its location cannot change.",
                              "location");
        }
        auto updated = ctx.store.update(id, [&](nlohmann::json& w) {
            if (tags.is_object()) {
                w["tags"] = tags;
            } else {
                w.erase("tags");
            }
            return true;
        });
        return send_resource(res, *updated, redacted_view(*updated));
    }
    ctx.store.create(id, group.body["id"].get<std::string>(), kind::kWorkspace,
                     new_workspace(id, p["workspaceName"], body["location"], tags));
    StoredResource stored = *ctx.store.get(id);
    send_resource(res, stored, redacted_view(stored));
}

void patch_workspace(ArmContext& ctx, const ArmRequest& req, const Params& p, httplib::Response& res) {
    check_workspace(ctx, p);
    nlohmann::json body = req.json_body().value_or(nlohmann::json::object());
    check_body(body, ResourceKind::workspace_update, ApiVersion::v2018_05_01);
    auto updated = ctx.store.update(workspace_id(p), [&](nlohmann::json& w) {
        if (!body.contains("tags")) return false;
        w["tags"] = body["tags"];
        return true;
    });
    send_resource(res, *updated, workspace_view(*updated));
}

void put_experiment(ArmContext& ctx, const ArmRequest&, const Params& p, httplib::Response& res) {
    StoredResource workspace = require_workspace(ctx, p);
    StoredResource stored = ensure_experiment(ctx, workspace.body["id"], p["experimentName"]);
    send_resource(res, stored, redacted_view(stored));
}

OperationTarget delete_target(const Params& p, const std::string& id, const StoredResource& workspace,
                              std::initializer_list<const char*> names) {
    return {"delete", id, resource_ref(p, names), p["subscriptionId"], workspace.body["location"]};
}

}  // namespace

void check_workspace(const ArmContext& ctx, const Params& p) {
    check_group(ctx, p);
    check_exists(ctx, workspace_id(p), "WorkspaceNotFound", "workspace", p["workspaceName"]);
}

StoredResource require_workspace(const ArmContext& ctx, const Params& p) {
    check_group(ctx, p);
    return require(ctx, workspace_id(p), "WorkspaceNotFound", "workspace", p["workspaceName"]);
}

void check_experiment(const ArmContext& ctx, const Params& p) {
    check_workspace(ctx, p);
    check_exists(ctx, experiment_id(p), "ExperimentNotFound", "experiment", p["experimentName"]);
}

StoredResource require_experiment(const ArmContext& ctx, const Params& p) {
    check_workspace(ctx, p);
    return require(ctx, experiment_id(p), "ExperimentNotFound", "experiment", p["experimentName"]);
}

StoredResource ensure_workspace(ArmContext& ctx, const Params& p, const std::string& name, const std::string& location) {
    const std::string id = workspace_id(p, name);
    ctx.store.create(id, group_id(p), kind::kWorkspace, new_workspace(id, name, location, nlohmann::json()));
    return *ctx.store.get(id);
}

StoredResource ensure_experiment(ArmContext& ctx, const std::string& workspace_id, const std::string& name) {
    const std::string id = experiment_id(workspace_id, name);
    nlohmann::json e{{"id", id}, {"name", name}, {"type", "Microsoft.BatchAI/workspaces/experiments"},
                     {"properties", nlohmann::json::object()}};
    stamp_new(e["properties"], "succeeded");
    ctx.store.create(id, workspace_id, kind::kExperiment, e);
    return *ctx.store.get(id);
}

void add_workspace_routes(Router& router, ArmContext& ctx) {
    const auto v = Versions::batchai_2018;
    router.add("GET", "/subscriptions/{subscriptionId}/providers/Microsoft.BatchAI/workspaces", v,
               "Microsoft.BatchAI/workspaces/read",
               [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) {
                   send_list(req, res, ctx.store.under(subscription_id(p), kind::kWorkspace, skip_token(req), req.max_results()), workspace_view);
               });
    router.add("GET", kWorkspaces, v, "Microsoft.BatchAI/workspaces/read",
               [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) {
                   check_group(ctx, p);
                   send_list(req, res, ctx.store.children(group_id(p), kind::kWorkspace, skip_token(req), req.max_results()), workspace_view);
               });
    router.add("PUT", kWorkspace, v, "Microsoft.BatchAI/workspaces/write",
               [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) { put_workspace(ctx, req, p, res); });
    router.add("PATCH", kWorkspace, v, "Microsoft.BatchAI/workspaces/write",
               [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) { patch_workspace(ctx, req, p, res); });
    router.add("GET", kWorkspace, v, "Microsoft.BatchAI/workspaces/read",
               [&ctx](const ArmRequest&, const Params& p, httplib::Response& res) {
                   StoredResource w = require_workspace(ctx, p);
                   send_resource(res, w, workspace_view(w));
               });
    router.add("DELETE", kWorkspace, v, "Microsoft.BatchAI/workspaces/delete",
               [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) {
                   check_group(ctx, p);
                   std::optional<StoredResource> w = ctx.store.get(workspace_id(p));
                   if (!w) return void(res.status = 204);
                   start_delete(ctx, req, res, delete_target(p, w->body["id"], *w, {"workspaceName"}));
               });
    router.add("GET", kExperiments, v, "Microsoft.BatchAI/workspaces/experiments/read",
               [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) {
                   check_workspace(ctx, p);
                   send_list(req, res, ctx.store.children(workspace_id(p), kind::kExperiment, skip_token(req), req.max_results()), redacted_view);
               });
    router.add("PUT", kExperiment, v, "Microsoft.BatchAI/workspaces/experiments/write",
               [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) { put_experiment(ctx, req, p, res); });
    router.add("GET", kExperiment, v, "Microsoft.BatchAI/workspaces/experiments/read",
               [&ctx](const ArmRequest&, const Params& p, httplib::Response& res) {
                   StoredResource e = require_experiment(ctx, p);
                   send_resource(res, e, redacted_view(e));
               });
    router.add("DELETE", kExperiment, v, "Microsoft.BatchAI/workspaces/experiments/delete",
               [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) {
                   StoredResource w = require_workspace(ctx, p);
                   std::optional<StoredResource> e = ctx.store.get(experiment_id(p));
                   if (!e) return void(res.status = 204);
                   start_delete(ctx, req, res, delete_target(p, e->body["id"], w, {"workspaceName", "experimentName"}));
               });
}

}  // namespace bai::arm
