#include "emulator/arm/jobs.h"

#include "common/crypto/random_id.h"
#include "emulator/arm/batchai_common.h"
#include "emulator/arm/batchai_view.h"
#include "emulator/arm/cloud_error.h"
#include "emulator/arm/output_files.h"
#include "emulator/arm/resource_defaults.h"
#include "emulator/arm/resource_ids.h"
#include "emulator/arm/resource_view.h"
#include "emulator/arm/text.h"
#include "emulator/arm/workspaces.h"

namespace bai::arm {
namespace {

using validation::ApiVersion;
using validation::ResourceKind;

const std::string kJobs =
    "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.BatchAI/workspaces/"
    "{workspaceName}/experiments/{experimentName}/jobs";
const std::string kJob = kJobs + "/{jobName}";

// The service kept a job's name in lower case (a PUT of jobs/myJob made `myjob`: its id, name,
// output path and operation, recorded in February 2020). Other resources keep their names as
// sent: nothing recorded says otherwise.
std::string job_name(const Params& p) { return lower(p["jobName"]); }
std::string job_id(const Params& p) { return experiment_id(p) + "/jobs/" + job_name(p); }


StoredResource require_job(const ArmContext& ctx, const Params& p) {
    check_experiment(ctx, p);
    return require(ctx, job_id(p), "JobNotFound", "job", p["jobName"]);
}

// The workspace (for the operation's location), checking the experiment on the way.
StoredResource require_workspace_and_experiment(const ArmContext& ctx, const Params& p) {
    StoredResource workspace = require_workspace(ctx, p);
    check_exists(ctx, experiment_id(p), "ExperimentNotFound", "experiment", p["experimentName"]);
    return workspace;
}

OperationTarget target(const Params& p, const std::string& kind, const std::string& id, const StoredResource& workspace) {
    return {kind, id, resource_ref(p, {"workspaceName", "experimentName"}) + "$" + job_name(p), p["subscriptionId"],
            workspace.body["location"]};
}

void put_job(ArmContext& ctx, const ArmRequest& req, const Params& p, httplib::Response& res) {
    StoredResource workspace = require_workspace_and_experiment(ctx, p);
    nlohmann::json body = req.json_body().value_or(nlohmann::json::object());
    check_body(body, ResourceKind::job, ApiVersion::v2018_05_01);
    const std::string id = job_id(p);
    // A PUT of a job that exists changes nothing and answers it, 200 (as recorded: jobs have no update).
    if (std::optional<StoredResource> existing = ctx.store.get(id)) {
        return send_resource(res, *existing, job_view(*existing));
    }
    nlohmann::json properties = body["properties"];
    require_job_cluster(ctx, properties);
    properties["experimentName"] = p["experimentName"];
    stamp_new(properties, "creating");
    std::string segment = p["subscriptionId"] + "/" + p["resourceGroupName"] + "/workspaces/" + p["workspaceName"] +
                          "/experiments/" + p["experimentName"] + "/jobs/" + job_name(p) + "/" + crypto::uuid4();
    fill_job_defaults(properties, segment, Era::latest);
    nlohmann::json job{{"id", id}, {"name", job_name(p)}, {"type", "Microsoft.BatchAI/workspaces/experiments/jobs"},
                       {"properties", std::move(properties)}};
    // The size the job will run on, kept for its view (batchai_view.h) even after the cluster goes.
    if (std::optional<StoredResource> cluster = ctx.store.get(job["properties"]["cluster"]["id"].get<std::string>())) {
        job[kJobVmSize] = cluster->body["properties"].value("vmSize", "");
    }
    ctx.store.atomically([&] {
        if (!ctx.store.create(id, experiment_id(p), kind::kJob, job)) {
            throw CloudError(409, "JobAlreadyExists", "The specified job " + p["jobName"] + " already exists");
        }
        start_operation(ctx, req, res, target(p, "create", id, workspace));
    });
}

}  // namespace

void require_job_cluster(const ArmContext& ctx, const nlohmann::json& properties) {
    const std::string cluster = properties["cluster"]["id"];
    if (ctx.store.type_of(cluster) != kind::kCluster) {
        throw bad_request("ClusterNotFound", "The cluster " + cluster + " given in properties.cluster.id is not found",
                          "properties.cluster.id");
    }
}

void add_job_routes(Router& router, ArmContext& ctx) {
    const auto v = Versions::batchai_2018;
    const std::string op = "Microsoft.BatchAI/workspaces/experiments/jobs/";
    router.add("GET", kJobs, v, op + "read", [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) {
        check_experiment(ctx, p);
        send_list(req, res, ctx.store.children(experiment_id(p), kind::kJob, skip_token(req), req.max_results()), job_view);
    });
    router.add("PUT", kJob, v, op + "write",
               [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) { put_job(ctx, req, p, res); });
    router.add("GET", kJob, v, op + "read", [&ctx](const ArmRequest&, const Params& p, httplib::Response& res) {
        StoredResource job = require_job(ctx, p);
        send_resource(res, job, job_view(job));
    });
    router.add("DELETE", kJob, v, op + "delete", [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) {
        StoredResource workspace = require_workspace_and_experiment(ctx, p);
        std::optional<StoredResource> job = ctx.store.get(job_id(p));
        if (!job) return void(res.status = 204);
        start_delete(ctx, req, res, target(p, "delete", job->body["id"], workspace));
    });
    router.add("POST", kJob + "/terminate", v, op + "terminate/action",
               [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) {
                   StoredResource workspace = require_workspace_and_experiment(ctx, p);
                   StoredResource job = require(ctx, job_id(p), "JobNotFound", "job", p["jobName"]);
                   start_terminate(ctx, req, res, job, target(p, "terminate", job.body["id"], workspace));
               });
    router.add("POST", kJob + "/listRemoteLoginInformation", v, op + "remoteLoginInformation/action",
               [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) {
                   send_page(res, req, ctx.engine.remote_login(require_job(ctx, p)), std::nullopt);
               });
    // The SDK fetches the pages after the first with GET on nextLink.
    for (const char* method : {"POST", "GET"}) {
        router.add(method, kJob + "/listOutputFiles", v, op + "listOutputFiles/action",
                   [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) {
                       list_output_files(ctx, req, require_job(ctx, p), res);
                   });
    }
}

}  // namespace bai::arm
