#include "emulator/arm/clusters.h"

#include "common/crypto/random_id.h"
#include "emulator/arm/batchai_common.h"
#include "emulator/arm/batchai_view.h"
#include "emulator/arm/cloud_error.h"
#include "emulator/arm/mount_volumes.h"
#include "emulator/arm/resource_defaults.h"
#include "emulator/arm/resource_ids.h"
#include "emulator/arm/resource_view.h"
#include "emulator/arm/workspaces.h"

namespace bai::arm {
namespace {

using validation::ApiVersion;
using validation::ResourceKind;

const std::string kWorkspaceRoute =
    "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.BatchAI/workspaces/"
    "{workspaceName}";


// What differs between clusters and file servers.
struct Kind {
    const char* collection;  // path segment
    const char* id_segment;  // in the ids the service wrote (lower-case for file servers)
    const char* param;
    const char* stored_type;
    const char* type;  // ARM type
    const char* noun;
    const char* not_found;
    const char* exists;
    ResourceKind validation;
    nlohmann::json (*view)(const StoredResource&);  // what a GET answers
};

constexpr Kind kClusters{"clusters", "clusters", "clusterName", kind::kCluster, "Microsoft.BatchAI/workspaces/clusters",
                         "cluster", "ClusterNotFound", "ClusterAlreadyExists", ResourceKind::cluster, cluster_view};
constexpr Kind kFileServers{"fileServers", "fileservers", "fileServerName", kind::kFileServer,
                            "Microsoft.BatchAI/workspaces/fileservers", "file server", "FileServerNotFound",
                            "FileServerAlreadyExists", ResourceKind::file_server, redacted_view};

std::string item_id(const Kind& k, const Params& p) { return workspace_id(p) + "/" + k.id_segment + "/" + p[k.param]; }

StoredResource require_item(const ArmContext& ctx, const Kind& k, const Params& p) {
    check_workspace(ctx, p);
    return require(ctx, item_id(k, p), k.not_found, k.noun, p[k.param]);
}

OperationTarget target(const Kind& k, const Params& p, const std::string& kind_name, const std::string& id,
                       const StoredResource& workspace) {
    return {kind_name, id, resource_ref(p, {"workspaceName", k.param}), p["subscriptionId"], workspace.body["location"]};
}

void put_item(ArmContext& ctx, const Kind& k, const ArmRequest& req, const Params& p, httplib::Response& res) {
    StoredResource workspace = require_workspace(ctx, p);
    nlohmann::json body = req.json_body().value_or(nlohmann::json::object());
    check_body(body, k.validation, ApiVersion::v2018_05_01);
    const std::string id = item_id(k, p);
    const std::string name = p[k.param];
    // As a PUT of an existing job: nothing changes, the resource is the answer (200).
    if (std::optional<StoredResource> existing = ctx.store.get(id)) {
        return send_resource(res, *existing, k.view(*existing));
    }
    nlohmann::json properties = body["properties"];
    stamp_new(properties, "creating");
    if (k.stored_type == kind::kCluster) {
        check_cluster_image(properties);
        fill_cluster_defaults(properties,
                              p["subscriptionId"] + "/" + p["resourceGroupName"] + "/workspaces/" + p["workspaceName"] +
                                  "/clusters/" + name + "/" + crypto::uuid4(),
                              Era::latest);
        inherit_file_server_subnet(ctx, properties);
    }
    nlohmann::json item{{"id", id}, {"name", name}, {"type", k.type}, {"properties", std::move(properties)}};
    // Clusters carry their workspace's location (recorded from February 2021); file servers, of
    // which nothing that late was recorded, do not.
    if (k.stored_type == kind::kCluster) item["location"] = workspace.body["location"];
    ctx.store.atomically([&] {
        if (!ctx.store.create(id, workspace.body["id"].get<std::string>(), k.stored_type, item)) {
            throw CloudError(409, k.exists, "The specified " + std::string(k.noun) + " " + name + " already exists");
        }
        if (k.stored_type == kind::kFileServer) {
            // Each file server gets its own loopback address, from its creation order.
            std::int64_t seq = ctx.store.get(id)->seq;
            std::string address = "127.0.2." + std::to_string(seq % 254 + 1);
            ctx.store.update(id, [&](nlohmann::json& fs) {
                fill_file_server_defaults(fs["properties"], address, "/data", p["subscriptionId"]);
                return true;
            });
        }
        start_operation(ctx, req, res, target(k, p, "create", id, workspace));
    });
}

void add_routes(Router& router, ArmContext& ctx, const Kind& k, const std::string& op) {
    const auto v = Versions::batchai_2018;
    const std::string collection = kWorkspaceRoute + "/" + k.collection;
    const std::string item = collection + "/{" + k.param + "}";
    router.add("GET", collection, v, op + "read", [&ctx, &k](const ArmRequest& req, const Params& p, httplib::Response& res) {
        check_workspace(ctx, p);
        send_list(req, res, ctx.store.children(workspace_id(p), k.stored_type, skip_token(req), req.max_results()), k.view);
    });
    router.add("PUT", item, v, op + "write", [&ctx, &k](const ArmRequest& req, const Params& p, httplib::Response& res) {
        put_item(ctx, k, req, p, res);
    });
    router.add("GET", item, v, op + "read", [&ctx, &k](const ArmRequest&, const Params& p, httplib::Response& res) {
        StoredResource r = require_item(ctx, k, p);
        send_resource(res, r, k.view(r));
    });
    router.add("DELETE", item, v, op + "delete", [&ctx, &k](const ArmRequest& req, const Params& p, httplib::Response& res) {
        StoredResource workspace = require_workspace(ctx, p);
        std::optional<StoredResource> r = ctx.store.get(item_id(k, p));
        if (!r) return void(res.status = 204);
        start_delete(ctx, req, res, target(k, p, "delete", r->body["id"], workspace));
    });
}

}  // namespace

void inherit_file_server_subnet(const ArmContext& ctx, nlohmann::json& properties) {
    if (!properties.is_object() || properties.contains("subnet")) return;
    std::optional<nlohmann::json> subnet;
    for_each_mount_volumes(properties, [&](nlohmann::json& volumes) {
        if (subnet || !volumes.contains("fileServers") || !volumes["fileServers"].is_array()) return;
        for (const nlohmann::json& mount : volumes["fileServers"]) {
            if (!mount.is_object() || !mount.contains("fileServer") || !mount["fileServer"].is_object()) continue;
            const nlohmann::json& server_ref = mount["fileServer"];
            if (!server_ref.contains("id") || !server_ref["id"].is_string()) continue;
            std::optional<StoredResource> server = ctx.store.get(server_ref["id"].get<std::string>());
            if (server && server->body["properties"].contains("subnet")) {
                subnet = server->body["properties"]["subnet"];
                return;
            }
        }
    });
    if (subnet) properties["subnet"] = std::move(*subnet);
}

std::optional<StoredResource> apply_cluster_update(ArmContext& ctx, const std::string& cluster_id,
                                                   const nlohmann::json& body) {
    const nlohmann::json empty = nlohmann::json::object();
    const nlohmann::json& update = body.contains("properties") ? body["properties"] : empty;
    auto updated = ctx.store.update(cluster_id, [&](nlohmann::json& cluster) {
        bool changed = false;
        if (update.contains("scaleSettings")) {
            nlohmann::json scale = update["scaleSettings"];
            // A cluster made through the flat API keeps that API's era.
            fill_scale_defaults(scale, cluster.contains("_preview") ? Era::early_2018 : Era::latest);
            cluster["properties"]["scaleSettings"] = std::move(scale);
            changed = true;
        }
        if (body.contains("tags") && cluster.contains("_preview")) {
            cluster["_preview"]["tags"] = body["tags"];
            changed = true;
        }
        return changed;
    });
    if (updated && update.contains("scaleSettings")) ctx.engine.cluster_scaled(cluster_id);
    return updated ? ctx.store.get(cluster_id) : std::nullopt;
}

void add_cluster_routes(Router& router, ArmContext& ctx) {
    add_routes(router, ctx, kClusters, "Microsoft.BatchAI/workspaces/clusters/");
    const std::string item = kWorkspaceRoute + "/clusters/{clusterName}";
    router.add("PATCH", item, Versions::batchai_2018, "Microsoft.BatchAI/workspaces/clusters/write",
               [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) {
                   StoredResource cluster = require_item(ctx, kClusters, p);
                   nlohmann::json body = req.json_body().value_or(nlohmann::json::object());
                   check_body(body, ResourceKind::cluster_update, ApiVersion::v2018_05_01);
                   StoredResource updated = *apply_cluster_update(ctx, cluster.body["id"], body);
                   send_resource(res, updated, cluster_view(updated));
               });
    router.add("POST", item + "/listRemoteLoginInformation", Versions::batchai_2018,
               "Microsoft.BatchAI/workspaces/clusters/remoteLoginInformation/action",
               [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) {
                   send_page(res, req, ctx.engine.remote_login(require_item(ctx, kClusters, p)), std::nullopt);
               });
}

void add_file_server_routes(Router& router, ArmContext& ctx) {
    add_routes(router, ctx, kFileServers, "Microsoft.BatchAI/workspaces/fileservers/");
}

}  // namespace bai::arm
