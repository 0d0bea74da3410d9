#include "emulator/arm/provider_routes.h"

#include <set>

#include "emulator/arm/cloud_error.h"
#include "emulator/arm/resource_ids.h"
#include "emulator/arm/resource_view.h"
#include "emulator/arm/text.h"
#include "emulator/arm/usages.h"

namespace bai::arm {
namespace {

constexpr const char* kOperationPath = "/subscriptions/{subscriptionId}/providers/{providerNamespace}/locations/{location}";

Operation require_operation(const ArmContext& ctx, const Params& p) {
    std::optional<Operation> op = ctx.operations.get(p["operationId"]);
    // An operation answers under its own provider's path only.
    if (!op || !iequals(op->subscription, p["subscriptionId"]) || !iequals(op->provider, p["providerNamespace"])) {
        throw CloudError(404, "OperationNotFound", "The operation " + p["operationId"] + " is not found");
    }
    return *op;
}

// "Microsoft.BatchAI/workspaces/experiments/jobs/read" -> a display block as the service wrote it.
nlohmann::json describe(const std::string& name) {
    size_t first = name.find('/');
    size_t last = name.rfind('/');
    std::string resource = name.substr(first + 1, last - first - 1);
    std::string verb = name.substr(last + 1);
    std::string operation = verb == "read" ? "Get or list" : verb == "write" ? "Create or update"
                          : verb == "delete" ? "Delete" : verb;
    return {{"name", name},
            {"display", {{"provider", name.substr(0, first)}, {"resource", resource}, {"operation", operation},
                         {"description", operation + " " + resource}}},
            {"origin", "user,system"}};
}


}  // namespace

void add_provider_routes(Router& router, ArmContext& ctx) {
    router.add("GET", "/providers/Microsoft.BatchAI/operations", Versions::batchai_both, "Microsoft.BatchAI/operations/read",
               [&router](const ArmRequest& req, const Params&, httplib::Response& res) {
                   std::set<std::string> names;
                   for (const Route& r : router.routes()) {
                       if (r.operation.rfind("Microsoft.BatchAI/", 0) == 0) names.insert(r.operation);
                   }
                   nlohmann::json items = nlohmann::json::array();
                   for (const std::string& n : names) items.push_back(describe(n));
                   send_page(res, req, items, std::nullopt);
               });
    router.add("GET", "/subscriptions/{subscriptionId}/providers/Microsoft.BatchAI/locations/{location}/usages",
               Versions::batchai_stable, "Microsoft.BatchAI/locations/usages/read",
               [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) {
                   nlohmann::json cores = ctx.engine.cores_in_use(p["location"]);
                   // Each API version lists the model of its era (usages.h); only 2018's counted clusters.
                   if (req.api_version() != kApi2018March) return send_page(res, req, batchai_usages_2021(cores), std::nullopt);
                   long long clusters = 0;
                   for (const StoredResource& c : ctx.store.under(subscription_id(p), kind::kCluster, 0, 100000).items) {
                       std::optional<StoredResource> ws = ctx.store.get(c.body["id"].get<std::string>().substr(
                           0, c.body["id"].get<std::string>().find("/clusters/")));
                       if (ws && iequals(ws->body.value("location", ""), p["location"])) ++clusters;
                   }
                   send_page(res, req, batchai_usages(clusters, cores), std::nullopt);
               });
    router.add("GET", std::string(kOperationPath) + "/operationresults/{operationId}", Versions::any_dated,
               "Microsoft.BatchAI/locations/operationresults/read",
               [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) {
                   Operation op = require_operation(ctx, p);
                   if (op.status == "InProgress") OperationTracker::ask_back(res);
                   send_json(res, 200, OperationTracker::document(op, req.base_url));
               });
    // The Location URL: 202 while in progress (how Location polling learns it), then 200.
    router.add("GET", std::string(kOperationPath) + "/operationstatuses/{operationId}", Versions::any_dated,
               "Microsoft.BatchAI/locations/operationstatuses/read",
               [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) {
                   Operation op = require_operation(ctx, p);
                   if (op.status == "Failed") return send_json(res, 400, {{"error", op.error}});
                   if (op.status == "InProgress") {
                       res.set_header("Location", req.base_url + req.http.path + "?api-version=" + op.api_version);
                       OperationTracker::ask_back(res);
                   }
                   send_json(res, op.status == "InProgress" ? 202 : 200, OperationTracker::document(op, req.base_url));
               });
}

}  // namespace bai::arm
