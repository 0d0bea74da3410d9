#include "emulator/arm/subscriptions.h"

#include "emulator/arm/cloud_error.h"
#include "emulator/arm/resource_groups.h"
#include "emulator/arm/resource_ids.h"
#include "emulator/arm/resource_view.h"
#include "emulator/arm/regions.h"
#include "emulator/arm/text.h"
#include "emulator/identity/service_principals.h"

namespace bai::arm {
namespace {

std::string subscription_path(const std::string& id) { return "/subscriptions/" + id; }

nlohmann::json subscription_view(const std::string& id) {
    return {{"id", subscription_path(id)},
            {"authorizationSource", "RoleBased"},
            {"managedByTenants", nlohmann::json::array()},
            {"subscriptionId", id},
            {"tenantId", identity::kTenantId},
            {"displayName", iequals(id, identity::kDefaultSubscriptionId) ? "Batch AI Emulator"
                                                                           : "Batch AI Emulator " + id},
            {"state", "Enabled"},
            {"subscriptionPolicies",
             {{"locationPlacementId", "Public_2014-09-01"}, {"quotaId", "PayAsYouGo_2014-09-01"}, {"spendingLimit", "Off"}}}};
}

// The subscriptions ARM knows, the default one first.
std::vector<std::string> known_subscriptions(ArmContext& ctx) {
    std::vector<std::string> ids{identity::kDefaultSubscriptionId};
    for (const StoredResource& s : ctx.store.all_of_type(kind::kSubscription)) {
        std::string id = s.body.value("subscriptionId", "");
        if (!id.empty() && !iequals(id, identity::kDefaultSubscriptionId)) ids.push_back(id);
    }
    return ids;
}

nlohmann::json location_view(const std::string& subscription, const Region& r) {
    const std::string base = subscription_path(subscription) + "/locations/";
    return {{"id", base + r.name},
            {"name", r.name},
            {"displayName", r.display},
            {"regionalDisplayName", std::string("(") + r.geography + ") " + r.display},
            {"metadata",
             {{"regionType", "Physical"},
              {"regionCategory", "Recommended"},
              {"geographyGroup", r.geography},
              {"pairedRegion", {{{"name", r.paired}, {"id", base + r.paired}}}}}}};
}

}  // namespace

std::string require_known_subscription(ArmContext& ctx, const std::string& id) {
    std::optional<StoredResource> known = ctx.store.get(subscription_path(id));
    if (!known || known->type != kind::kSubscription) {
        throw CloudError(404, "SubscriptionNotFound", "The subscription '" + id + "' could not be found.");
    }
    return known->body.value("subscriptionId", id);
}

void add_subscription_routes(Router& router, ArmContext& ctx) {
    remember_subscription(ctx, subscription_path(identity::kDefaultSubscriptionId));
    router.add("GET", "/subscriptions", Versions::any_dated, "Microsoft.Resources/subscriptions/read",
               [&ctx](const ArmRequest&, const Params&, httplib::Response& res) {
                   nlohmann::json list = nlohmann::json::array();
                   for (const std::string& id : known_subscriptions(ctx)) list.push_back(subscription_view(id));
                   send_json(res, 200, {{"value", list}, {"count", {{"type", "Total"}, {"value", list.size()}}}});
               });
    router.add("GET", "/subscriptions/{subscriptionId}", Versions::any_dated, "Microsoft.Resources/subscriptions/read",
               [&ctx](const ArmRequest&, const Params& p, httplib::Response& res) {
                   send_json(res, 200, subscription_view(require_known_subscription(ctx, p["subscriptionId"])));
               });
    router.add("GET", "/subscriptions/{subscriptionId}/locations", Versions::any_dated,
               "Microsoft.Resources/subscriptions/locations/read",
               [&ctx](const ArmRequest&, const Params& p, httplib::Response& res) {
                   const std::string id = require_known_subscription(ctx, p["subscriptionId"]);
                   nlohmann::json list = nlohmann::json::array();
                   for (const Region& r : kRegions) list.push_back(location_view(id, r));
                   send_json(res, 200, {{"value", list}});
               });
    router.add("GET", "/tenants", Versions::any_dated, "Microsoft.Resources/tenants/read",
               [](const ArmRequest&, const Params&, httplib::Response& res) {
                   nlohmann::json tenant{{"id", std::string("/tenants/") + identity::kTenantId},
                                         {"tenantId", identity::kTenantId},
                                         {"tenantCategory", "Home"},
                                         {"countryCode", "US"},
                                         {"displayName", identity::kTenantName},
                                         {"domains", {"batchai-emulator.local"}},
                                         {"defaultDomain", "batchai-emulator.local"},
                                         {"tenantType", "AAD"}};
                   send_json(res, 200, {{"value", {tenant}}, {"count", {{"type", "Total"}, {"value", 1}}}});
               });
}

}  // namespace bai::arm
