#include "emulator/arm/preview_api.h"

#include <algorithm>
#include <cctype>
#include <functional>

#include "common/crypto/random_id.h"
#include "emulator/arm/batchai_common.h"
#include "emulator/arm/cloud_error.h"
#include "emulator/arm/clusters.h"
#include "emulator/arm/jobs.h"
#include "emulator/arm/mount_volumes.h"
#include "emulator/arm/odata_filter.h"
#include "emulator/arm/output_files.h"
#include "emulator/arm/resource_defaults.h"
#include "emulator/arm/resource_ids.h"
#include "emulator/arm/resource_view.h"
#include "emulator/arm/text.h"
#include "emulator/arm/workspaces.h"

namespace bai::arm {
namespace {

using nlohmann::json;
using validation::ApiVersion;
using validation::ResourceKind;

constexpr const char* kMigratedExperiment = "migrated";
constexpr const char* kOutputLayout = "outputLayout";  // in a job's _preview
const std::string kProvider = "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.BatchAI";

struct FlatKind {
    const char* collection;  // flat path segment
    const char* id_segment;  // in the ids the service wrote (lower-case for file servers)
    const char* param;
    const char* stored_type;
    const char* preview_type;
    const char* stored_type_2018;
    ResourceKind validation;
};

constexpr FlatKind kFlatClusters{"clusters", "clusters", "clusterName", kind::kCluster, "Microsoft.BatchAI/Clusters",
                             "Microsoft.BatchAI/workspaces/clusters", ResourceKind::cluster};
constexpr FlatKind kFlatJobs{"jobs", "jobs", "jobName", kind::kJob, "Microsoft.BatchAI/Jobs",
                         "Microsoft.BatchAI/workspaces/experiments/jobs", ResourceKind::job};
constexpr FlatKind kFlatFileServers{"fileServers", "fileservers", "fileServerName", kind::kFileServer, "Microsoft.BatchAI/FileServers",
                                "Microsoft.BatchAI/workspaces/fileservers", ResourceKind::file_server};

bool is_migrated(const std::string& workspace_name) {
    return workspace_name.size() > 9 && iequals(workspace_name.substr(0, 9), "migrated-");
}

// Where a flat resource of `k` named `name` lives under a workspace.
std::string stored_id(const FlatKind& k, const std::string& workspace_id, const std::string& name) {
    if (k.stored_type == kind::kJob) return experiment_id(workspace_id, kMigratedExperiment) + "/jobs/" + name;
    return workspace_id + "/" + k.id_segment + "/" + name;
}

// The flat id of a stored resource: the provider prefix of its id, then collection/name.
std::string flat_id(const FlatKind& k, const json& stored) {
    const std::string id = stored["id"];
    size_t cut = lower(id).find("/workspaces/");
    return id.substr(0, cut) + "/" + k.id_segment + "/" + stored["name"].get<std::string>();
}

std::optional<StoredResource> find_flat(const ArmContext& ctx, const std::string& group, const FlatKind& k,
                                        const std::string& name) {
    Page workspaces = ctx.store.children(group, kind::kWorkspace, 0, 100000);
    for (const StoredResource& ws : workspaces.items) {
        if (!is_migrated(ws.body["name"])) continue;
        if (auto found = ctx.store.get(stored_id(k, ws.body["id"], name))) return found;
    }
    return std::nullopt;
}

CloudError gateway_not_found(const FlatKind& k, const Params& p) {
    CloudError e(404, "ResourceNotFound",
                 "The Resource 'Microsoft.BatchAI/" + std::string(k.collection) + "/" + p[k.param] +
                     "' under resource group '" + p["resourceGroupName"] + "' was not found.");
    e.headers.emplace_back("x-ms-failure-cause", "gateway");
    return e;
}

StoredResource require_flat(const ArmContext& ctx, const FlatKind& k, const Params& p) {
    check_group(ctx, p);
    std::optional<StoredResource> found = find_flat(ctx, group_id(p), k, p[k.param]);
    if (!found) throw gateway_not_found(k, p);
    return *found;
}

// A flat cluster id in a preview body -> the stored cluster's id (any group of the subscription).
std::string stored_cluster_id(const ArmContext& ctx, const std::string& flat) {
    std::vector<std::string> parts = split_path(flat);
    // subscriptions/S/resourceGroups/R/providers/Microsoft.BatchAI/clusters/C
    if (parts.size() == 8 && iequals(parts[6], "clusters")) {
        std::string group = "/subscriptions/" + parts[1] + "/resourceGroups/" + parts[3];
        if (auto found = find_flat(ctx, group, kFlatClusters, parts[7])) return found->body["id"];
    }
    return flat;  // a 2018 id, or one that require_job_cluster refuses
}

// A flat file server id in a preview body -> the stored file server's id.
std::string stored_file_server_id(const ArmContext& ctx, const std::string& flat) {
    std::vector<std::string> parts = split_path(flat);
    if (parts.size() == 8 && iequals(parts[6], "fileservers")) {
        std::string group = "/subscriptions/" + parts[1] + "/resourceGroups/" + parts[3];
        if (auto found = find_flat(ctx, group, kFlatFileServers, parts[7])) return found->body["id"];
    }
    return flat;
}

// Applies `change` to every fileServers[].fileServer.id of a cluster's or job's mount volumes.
void map_file_server_ids(json& properties, const std::function<std::string(const std::string&)>& change) {
    for_each_mount_volumes(properties, [&](json& volumes) {
        if (!volumes.contains("fileServers") || !volumes["fileServers"].is_array()) return;
        for (json& mount : volumes["fileServers"]) {
            if (mount.is_object() && mount.contains("fileServer") && mount["fileServer"].is_object() &&
                mount["fileServer"].contains("id") && mount["fileServer"]["id"].is_string()) {
                mount["fileServer"]["id"] = change(mount["fileServer"]["id"].get<std::string>());
            }
        }
    });
}

std::string scheduling_priority(const json& priority) {
    if (!priority.is_number_integer()) return "normal";
    long long p = priority.get<long long>();
    return p > 0 ? "high" : p < 0 ? "low" : "normal";
}

// The 0.1 SDK (September 2017) named a mount's credentials `credentialsInfo`; the service took it
// for `credentials` and answered with the name the client had used. Renames every mount's
// `from` to `to` in the cluster's or job's mount volumes; whether any was renamed.
bool rename_mount_credentials(json& properties, const char* from, const char* to) {
    bool renamed = false;
    for_each_mount_volumes(properties, [&](json& volumes) {
        for (const char* list : {"azureFileShares", "azureBlobFileSystems"}) {
            if (!volumes.contains(list) || !volumes[list].is_array()) continue;
            for (json& mount : volumes[list]) {
                if (mount.is_object() && mount.contains(from) && !mount.contains(to)) {
                    mount[to] = std::move(mount[from]);
                    mount.erase(from);
                    renamed = true;
                }
            }
        }
    });
    return renamed;
}

ApiVersion validation_version(const ArmRequest& req) {
    return req.api_version() == kApi2018March ? ApiVersion::v2018_03_01 : ApiVersion::v2017_09_01_preview;
}

// A flat resource as `version` (2017-09-01-preview or 2018-03-01) shows it.
json preview_view(const ArmContext& ctx, const FlatKind& k, const StoredResource& stored, std::string_view version) {
    const bool march = version == kApi2018March;
    json v = redacted(stored.body);
    const json& preview = stored.body.value("_preview", json::object());
    v["id"] = flat_id(k, stored.body);
    v["type"] = k.preview_type;
    // As the preview service answered: clusters and file servers carry their location, and tags
    // where some were sent; jobs neither.
    if (k.stored_type != kind::kJob) {
        v["location"] = preview.value("location", "");
        if (preview.contains("tags")) v["tags"] = preview["tags"];
    }
    json& p = v["properties"];
    if (!march && preview.value("credentialsInfo", false)) rename_mount_credentials(p, "credentials", "credentialsInfo");
    // The preview's setup tasks wrote straight under their stdOutErrPathPrefix: no suffix.
    if (!march && p.contains("nodeSetup") && p["nodeSetup"].is_object() && p["nodeSetup"].contains("setupTask") &&
        p["nodeSetup"]["setupTask"].is_object()) {
        p["nodeSetup"]["setupTask"].erase("stdOutErrPathSuffix");
    }
    map_file_server_ids(p, [&](const std::string& id) {
        std::optional<StoredResource> server = ctx.store.get(id);
        return server ? flat_id(kFlatFileServers, server->body) : id;
    });
    // Enums stay lower-case, as the preview service wrote them from December 2017 (it capitalised
    // them before: a documented difference from the September 2017 recordings).
    if (k.stored_type == kind::kFileServer) {
        // The preview's file servers: a btrfs RAID-less volume exported over NFS.
        if (!march && p.contains("dataDisks") && p["dataDisks"].is_object()) {
            p["dataDisks"]["fileSystemType"] = "BRTFS";
            p["dataDisks"]["raidLevel"] = "NoRaid";
        }
        if (p.contains("mountSettings") && p["mountSettings"].is_object()) p["mountSettings"]["fileServerType"] = "nfs";
    }
    if (k.stored_type == kind::kJob) {
        p["priority"] = preview.value("priority", json(0));
        p.erase("schedulingPriority");
        // The flat API's error codes: a terminate was JobTerminate, a failed job preparation
        // JobNodePreparationFailed in the preview (recorded).
        if (p.contains("executionInfo") && p["executionInfo"].is_object() && p["executionInfo"].contains("errors") &&
            p["executionInfo"]["errors"].is_array()) {
            for (json& error : p["executionInfo"]["errors"]) {
                if (!error.is_object() || !error.contains("code") || !error["code"].is_string()) continue;
                if (error["code"] == "JobTerminated") error["code"] = "JobTerminate";
                if (!march && error["code"] == "JobPreparationFailed") error["code"] = "JobNodePreparationFailed";
            }
        }
        if (!march) p.erase("jobOutputDirectoryPathSegment");  // the preview service had none
        p.erase("experimentName");  // the 2018-05-01 view's: the preview echoes only what was sent
        if (preview.contains("experimentName")) p["experimentName"] = preview["experimentName"];
        if (p.contains("cluster") && p["cluster"].contains("id")) {
            if (auto cluster = ctx.store.get(p["cluster"]["id"].get<std::string>())) {
                p["cluster"]["id"] = flat_id(kFlatClusters, cluster->body);
            }
        }
        // The flat service created output directories anew (createNew true) unless told otherwise.
        if (p.contains("outputDirectories")) {
            for (json& dir : p["outputDirectories"]) {
                if (!dir.contains("createNew")) dir["createNew"] = true;
            }
        }
    }
    return v;
}

void put_flat(ArmContext& ctx, const FlatKind& k, const ArmRequest& req, const Params& p, httplib::Response& res) {
    check_group(ctx, p);
    json body = req.json_body().value_or(json::object());
    const bool march = req.api_version() == kApi2018March;
    const bool credentials_info = !march && body.contains("properties") &&
                                  rename_mount_credentials(body["properties"], "credentialsInfo", "credentials");
    check_body(body, k.validation, validation_version(req));
    const std::string name = p[k.param];
    // A PUT of a resource that exists changes nothing and answers it, 200, as the service did.
    if (std::optional<StoredResource> existing = find_flat(ctx, group_id(p), k, name)) {
        return send_resource(res, *existing, preview_view(ctx, k, *existing, req.api_version()));
    }
    const std::string location = body["location"];
    StoredResource workspace = ensure_workspace(ctx, p, migrated_workspace_name(location), location);
    std::string parent = workspace.body["id"];
    if (k.stored_type == kind::kJob) parent = ensure_experiment(ctx, parent, kMigratedExperiment).body["id"];

    json properties = body["properties"];
    map_file_server_ids(properties, [&](const std::string& flat) { return stored_file_server_id(ctx, flat); });
    json preview{{"location", location}};
    if (credentials_info) preview["credentialsInfo"] = true;
    if (body.contains("tags")) preview["tags"] = body["tags"];
    stamp_new(properties, "creating");
    const std::string id = stored_id(k, workspace.body["id"], name);
    if (k.stored_type == kind::kJob) {
        properties["cluster"]["id"] = stored_cluster_id(ctx, properties["cluster"]["id"]);
        require_job_cluster(ctx, properties);
        preview["priority"] = properties.value("priority", json(0));
        if (properties.contains("experimentName")) preview["experimentName"] = properties["experimentName"];
        properties["schedulingPriority"] = scheduling_priority(properties.value("priority", json(0)));
        properties.erase("priority");
        properties.erase("experimentName");
        // 2018-03-01's segment ends in a GUID of its own; the preview's had none, and its logs went
        // straight into it (uses_preview_output_layout).
        fill_job_defaults(properties, p["subscriptionId"] + "/" + p["resourceGroupName"] + "/jobs/" + name +
                                          (march ? "/" + crypto::uuid4() : std::string()));
        if (!march) preview[kOutputLayout] = "preview";
    } else if (k.stored_type == kind::kCluster) {
        // 2018-03-01's setup task output went to a directory of its own, as 2018-05-01's.
        fill_cluster_defaults(properties, p["subscriptionId"] + "/" + p["resourceGroupName"] + "/clusters/" + name +
                                              (march ? "/" + crypto::uuid4() : ""));
        inherit_file_server_subnet(ctx, properties);
    } else {
        fill_file_server_defaults(properties, "127.0.2.1", march ? "/data" : "/mnt/data", p["subscriptionId"]);
    }
    json item{{"id", id}, {"name", name}, {"type", k.stored_type_2018}, {"properties", std::move(properties)},
              {"_preview", std::move(preview)}};
    ctx.store.atomically([&] {
        if (!ctx.store.create(id, parent, k.stored_type, item)) {
            throw CloudError(409, "Conflict", "The specified resource " + name + " is being created");
        }
        start_operation(ctx, req, res, {"create", id, p["subscriptionId"] + "$" + p["resourceGroupName"] + "$" + name,
                                        p["subscriptionId"], location});
    });
}

// The preview's lists take OData $filter and $select (odata_filter.h) over the documents they
// return; the pages hold the documents that pass the filter.
void list_flat(const ArmContext& ctx, const FlatKind& k, const ArmRequest& req, const std::string& scope,
               httplib::Response& res) {
    int limit = req.max_results();
    std::int64_t after = skip_token(req);
    const std::optional<std::string> filter_text = req.query("$filter");
    const std::optional<std::string> select = req.query("$select");
    DocumentFilter keep = [](const nlohmann::json&) { return true; };
    try {
        if (filter_text && !filter_text->empty()) keep = parse_odata_filter(*filter_text);
        if (select) select_paths(nlohmann::json::object(), *select);  // checked before anything is listed
    } catch (const FilterError& e) {
        throw CloudError(400, "InvalidParameter", e.what(), std::string(e.what()).rfind("$select", 0) == 0 ? "$select" : "$filter");
    }
    Page all = ctx.store.under(scope, k.stored_type, after, 1000000);
    Page page;
    for (StoredResource& r : all.items) {
        std::string id = lower(r.body["id"].get<std::string>());
        size_t at = id.find("/workspaces/migrated-");
        if (at == std::string::npos) continue;
        if (!keep(preview_view(ctx, k, r, req.api_version()))) continue;
        if (static_cast<int>(page.items.size()) == limit) {
            page.next_after = page.items.back().seq;
            break;
        }
        page.items.push_back(std::move(r));
    }
    send_list(req, res, page, [&](const StoredResource& r) {
        nlohmann::json view = preview_view(ctx, k, r, req.api_version());
        return select ? select_paths(view, *select) : view;
    });
}

void add_flat_routes(Router& router, ArmContext& ctx, const FlatKind& k) {
    const auto v = Versions::batchai_preview;
    const std::string collection = kProvider + "/" + k.collection;
    const std::string item = collection + "/{" + k.param + "}";
    const std::string op = std::string("Microsoft.BatchAI/") + k.collection + "/";
    router.add("PUT", item, v, op + "write", [&ctx, &k](const ArmRequest& req, const Params& p, httplib::Response& res) {
        put_flat(ctx, k, req, p, res);
    });
    router.add("GET", item, v, op + "read", [&ctx, &k](const ArmRequest& req, const Params& p, httplib::Response& res) {
        StoredResource r = require_flat(ctx, k, p);
        send_resource(res, r, preview_view(ctx, k, r, req.api_version()));
    });
    router.add("DELETE", item, v, op + "delete", [&ctx, &k](const ArmRequest& req, const Params& p, httplib::Response& res) {
        check_group(ctx, p);
        std::optional<StoredResource> r = find_flat(ctx, group_id(p), k, p[k.param]);
        if (!r) return void(res.status = 204);
        start_delete(ctx, req, res, {"delete", r->body["id"], p["subscriptionId"] + "$" + p["resourceGroupName"] + "$" + p[k.param],
                                     p["subscriptionId"], r->body["_preview"].value("location", "")});
    });
    router.add("GET", collection, v, op + "read", [&ctx, &k](const ArmRequest& req, const Params& p, httplib::Response& res) {
        check_group(ctx, p);
        list_flat(ctx, k, req, group_id(p), res);
    });
    router.add("GET", "/subscriptions/{subscriptionId}/providers/Microsoft.BatchAI/" + std::string(k.collection), v,
               op + "read", [&ctx, &k](const ArmRequest& req, const Params& p, httplib::Response& res) {
                   list_flat(ctx, k, req, subscription_id(p), res);
               });
}

}  // namespace

bool uses_preview_output_layout(const json& job) {
    auto preview = job.find("_preview");
    return preview != job.end() && preview->is_object() && preview->value(kOutputLayout, "") == "preview";
}

std::string migrated_workspace_name(const std::string& location) {
    std::string folded;
    for (char c : location) {
        if (c != ' ') folded += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return "migrated-" + folded;
}

void add_preview_routes(Router& router, ArmContext& ctx) {
    add_flat_routes(router, ctx, kFlatClusters);
    add_flat_routes(router, ctx, kFlatJobs);
    add_flat_routes(router, ctx, kFlatFileServers);
    const auto v = Versions::batchai_preview;
    router.add("PATCH", kProvider + "/clusters/{clusterName}", v, "Microsoft.BatchAI/clusters/write",
               [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) {
                   StoredResource cluster = require_flat(ctx, kFlatClusters, p);
                   json body = req.json_body().value_or(json::object());
                   check_body(body, ResourceKind::cluster_update, validation_version(req));
                   StoredResource updated = *apply_cluster_update(ctx, cluster.body["id"], body);
                   send_resource(res, updated, preview_view(ctx, kFlatClusters, updated, req.api_version()));
               });
    router.add("POST", kProvider + "/clusters/{clusterName}/listRemoteLoginInformation", v,
               "Microsoft.BatchAI/clusters/remoteLoginInformation/action",
               [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) {
                   send_page(res, req, ctx.engine.remote_login(require_flat(ctx, kFlatClusters, p)), std::nullopt);
               });
    router.add("POST", kProvider + "/jobs/{jobName}/listRemoteLoginInformation", v,
               "Microsoft.BatchAI/jobs/remoteLoginInformation/action",
               [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) {
                   send_page(res, req, ctx.engine.remote_login(require_flat(ctx, kFlatJobs, p)), std::nullopt);
               });
    router.add("POST", kProvider + "/jobs/{jobName}/terminate", v, "Microsoft.BatchAI/jobs/terminate/action",
               [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) {
                   StoredResource job = require_flat(ctx, kFlatJobs, p);
                   start_terminate(ctx, req, res, job, {"terminate", job.body["id"],
                                                   p["subscriptionId"] + "$" + p["resourceGroupName"] + "$" + p["jobName"],
                                                   p["subscriptionId"], job.body["_preview"].value("location", "")});
               });
    for (const char* method : {"POST", "GET"}) {
        router.add(method, kProvider + "/jobs/{jobName}/listOutputFiles", v, "Microsoft.BatchAI/jobs/listOutputFiles/action",
                   [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) {
                       list_output_files(ctx, req, require_flat(ctx, kFlatJobs, p), res);
                   });
    }
}

}  // namespace bai::arm
