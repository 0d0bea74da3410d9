#include "emulator/arm/providers.h"

#include "emulator/arm/cloud_error.h"
#include "emulator/arm/regions.h"
#include "emulator/arm/resource_ids.h"
#include "emulator/arm/resource_view.h"
#include "emulator/arm/subscriptions.h"
#include "emulator/arm/text.h"

namespace bai::arm {
namespace {

constexpr const char* kProviderRegistration = "providerRegistration";

struct ResourceType {
    const char* name;
    bool global;  // served in every location as "global" rather than per region
};

struct Provider {
    const char* name;
    // A subscription starts with Microsoft.Resources (registration free), Microsoft.Storage and
    // Microsoft.Network registered, as a new one in the cloud has them; Microsoft.BatchAI and
    // Microsoft.Batch wait for `az provider register`, as the tutorials have users do.
    bool registered_at_start;
    std::vector<ResourceType> types;
    std::vector<const char*> api_versions;
};

const std::vector<Provider>& providers() {
    static const std::vector<Provider> kProviders = {
        {"Microsoft.BatchAI",
         false,
         {{"workspaces", false},
          {"workspaces/experiments", false},
          {"workspaces/experiments/jobs", false},
          {"workspaces/clusters", false},
          {"workspaces/fileservers", false},
          {"clusters", false},
          {"jobs", false},
          {"fileservers", false},
          {"operations", true},
          {"locations", true},
          {"locations/usages", false},
          {"locations/operationresults", false},
          {"locations/operationstatuses", false}},
         {"2018-05-01", "2018-03-01", "2017-09-01-preview"}},
        {"Microsoft.Batch",
         false,
         {{"batchAccounts", false},
          {"operations", true},
          {"locations", true},
          {"locations/quotas", false},
          {"locations/checkNameAvailability", false},
          {"locations/accountOperationResults", false}},
         {"2022-10-01", "2022-06-01", "2022-01-01", "2021-06-01", "2021-01-01"}},
        {"Microsoft.Storage",
         true,
         {{"storageAccounts", false},
          {"operations", true},
          {"checkNameAvailability", true},
          {"locations", true},
          {"locations/asyncoperations", false}},
         {"2022-09-01", "2022-05-01", "2021-09-01", "2021-06-01", "2021-04-01", "2019-06-01"}},
        {"Microsoft.Network",
         true,
         {{"virtualNetworks", false}, {"virtualNetworks/subnets", false}, {"operations", true},
          {"locations/operations", false}},
         {"2022-07-01", "2022-01-01", "2021-05-01", "2020-11-01"}},
        {"Microsoft.Resources",
         true,
         {{"resourceGroups", true},
          {"subscriptions", true},
          {"subscriptions/resourceGroups", true},
          {"subscriptions/locations", true},
          {"subscriptions/providers", true},
          {"subscriptions/operationresults", true},
          {"tenants", true},
          {"providers", true},
          {"operations", true}},
         {"2022-09-01", "2021-04-01", "2020-06-01", "2019-11-01", "2019-10-01"}},
    };
    return kProviders;
}

const Provider& require_provider(const std::string& name) {
    for (const Provider& p : providers()) {
        if (iequals(p.name, name)) return p;
    }
    throw CloudError(404, "InvalidResourceNamespace", "The resource namespace '" + name + "' is invalid.");
}

std::string registration_id(const std::string& subscription, const Provider& p) {
    return "/subscriptions/" + subscription + "/providers/" + p.name;
}

std::string state_of(ArmContext& ctx, const std::string& subscription, const Provider& p) {
    if (auto stored = ctx.store.get(registration_id(subscription, p))) {
        return stored->body.value("registrationState", "NotRegistered");
    }
    return p.registered_at_start ? "Registered" : "NotRegistered";
}

nlohmann::json provider_view(ArmContext& ctx, const std::string& subscription, const Provider& p) {
    nlohmann::json regions = nlohmann::json::array();
    for (const Region& r : kRegions) regions.push_back(r.display);
    nlohmann::json types = nlohmann::json::array();
    for (const ResourceType& t : p.types) {
        types.push_back({{"resourceType", t.name},
                         {"locations", t.global ? nlohmann::json::array() : regions},
                         {"apiVersions", p.api_versions},
                         {"defaultApiVersion", p.api_versions.front()},
                         {"capabilities", "None"}});
    }
    const bool free = std::string_view(p.name) == "Microsoft.Resources";
    return {{"id", registration_id(subscription, p)},
            {"namespace", p.name},
            {"registrationState", free ? "Registered" : state_of(ctx, subscription, p)},
            {"registrationPolicy", free ? "RegistrationFree" : "RegistrationRequired"},
            {"resourceTypes", types}};
}

void change_registration(ArmContext& ctx, const ArmRequest& req, const Params& params, httplib::Response& res,
                         bool registering) {
    const std::string subscription = require_known_subscription(ctx, params["subscriptionId"]);
    const Provider& p = require_provider(params["providerNamespace"]);
    if (std::string_view(p.name) != "Microsoft.Resources") {
        const std::string id = registration_id(subscription, p);
        const std::string state = state_of(ctx, subscription, p);
        const bool done = registering ? state == "Registered" : state == "NotRegistered" || state == "Unregistered";
        if (!done) {
            nlohmann::json body{{"registrationState", registering ? "Registering" : "Unregistering"}};
            if (!ctx.store.replace(id, body)) ctx.store.create(id, "/subscriptions/" + subscription, kProviderRegistration, body);
            Operation op;
            op.kind = registering ? "register" : "unregister";
            op.resource_id = id;
            op.provider = p.name;
            op.subscription = subscription;
            op.api_version = req.api_version();
            ctx.operations.begin(op);
        }
    }
    send_json(res, 200, provider_view(ctx, subscription, p));
}

}  // namespace

void complete_provider_registration(ArmContext& ctx, const Operation& op) {
    // A namespace never registered is NotRegistered; one unregistered, Unregistered (az waits for it).
    const std::string final_state = op.kind == "register" ? "Registered" : "Unregistered";
    ctx.store.update(op.resource_id, [&](nlohmann::json& body) {
        body["registrationState"] = final_state;
        return true;
    });
}

void add_provider_registration_routes(Router& router, ArmContext& ctx) {
    router.add("GET", "/subscriptions/{subscriptionId}/providers", Versions::any_dated,
               "Microsoft.Resources/subscriptions/providers/read",
               [&ctx](const ArmRequest&, const Params& p, httplib::Response& res) {
                   const std::string subscription = require_known_subscription(ctx, p["subscriptionId"]);
                   nlohmann::json list = nlohmann::json::array();
                   for (const Provider& provider : providers()) list.push_back(provider_view(ctx, subscription, provider));
                   send_json(res, 200, {{"value", list}});
               });
    router.add("GET", "/subscriptions/{subscriptionId}/providers/{providerNamespace}", Versions::any_dated,
               "Microsoft.Resources/subscriptions/providers/read",
               [&ctx](const ArmRequest&, const Params& p, httplib::Response& res) {
                   const std::string subscription = require_known_subscription(ctx, p["subscriptionId"]);
                   send_json(res, 200, provider_view(ctx, subscription, require_provider(p["providerNamespace"])));
               });
    router.add("POST", "/subscriptions/{subscriptionId}/providers/{providerNamespace}/register",
               Versions::any_dated, "Microsoft.Resources/subscriptions/providers/register/action",
               [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) {
                   change_registration(ctx, req, p, res, true);
               });
    router.add("POST", "/subscriptions/{subscriptionId}/providers/{providerNamespace}/unregister",
               Versions::any_dated, "Microsoft.Resources/subscriptions/providers/unregister/action",
               [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) {
                   change_registration(ctx, req, p, res, false);
               });
}

}  // namespace bai::arm
