#include "emulator/arm/resource_ids.h"

#include "emulator/arm/cloud_error.h"

namespace bai::arm {

std::string subscription_id(const Params& p) { return "/subscriptions/" + p["subscriptionId"]; }

std::string group_id(const Params& p) { return subscription_id(p) + "/resourceGroups/" + p["resourceGroupName"]; }

std::string batchai_id(const Params& p) { return group_id(p) + "/providers/Microsoft.BatchAI"; }

std::string workspace_id(const Params& p) { return workspace_id(p, p["workspaceName"]); }

std::string workspace_id(const Params& p, const std::string& workspace) {
    return batchai_id(p) + "/workspaces/" + workspace;
}

std::string experiment_id(const Params& p) { return experiment_id(workspace_id(p), p["experimentName"]); }

std::string experiment_id(const std::string& workspace_id, const std::string& experiment) {
    return workspace_id + "/experiments/" + experiment;
}

namespace {

// A subscription is one the emulator knows once a resource group was made in it (any id is
// accepted for that); before, ARM's answer is the one it gave for an unknown subscription.
[[noreturn]] void throw_group_not_found(const ArmContext& ctx, const Params& p) {
    if (!ctx.store.type_of(subscription_id(p)) &&
        ctx.store.under(subscription_id(p), kind::kResourceGroup, 0, 1).items.empty()) {
        throw CloudError(404, "SubscriptionNotFound", "The subscription '" + p["subscriptionId"] + "' could not be found.");
    }
    throw CloudError(404, "ResourceGroupNotFound", "Resource group '" + p["resourceGroupName"] + "' could not be found.");
}

[[noreturn]] void throw_not_found(const std::string& code, const std::string& noun, const std::string& name) {
    throw CloudError(404, code, "The specified " + noun + " " + name + " is not found");
}

}  // namespace

void check_group(const ArmContext& ctx, const Params& p) {
    if (!ctx.store.type_of(group_id(p))) throw_group_not_found(ctx, p);
}

StoredResource require_group(const ArmContext& ctx, const Params& p) {
    std::optional<StoredResource> group = ctx.store.get(group_id(p));
    if (!group) throw_group_not_found(ctx, p);
    return *group;
}

void check_exists(const ArmContext& ctx, const std::string& id, const std::string& code, const std::string& noun,
                  const std::string& name) {
    if (!ctx.store.type_of(id)) throw_not_found(code, noun, name);
}

StoredResource require(const ArmContext& ctx, const std::string& id, const std::string& code,
                       const std::string& noun, const std::string& name) {
    std::optional<StoredResource> found = ctx.store.get(id);
    if (!found) throw_not_found(code, noun, name);
    return *found;
}

void check_body(const nlohmann::json& body, validation::ResourceKind kind, validation::ApiVersion version) {
    validation::Report report = validation::validate(body, kind, version, validation::Mode::rest);
    if (report.ok()) return;
    auto code_of = [](const validation::Finding& f) {
        return f.message == "is required" ? "MissingRequiredProperty" : "InvalidRequestContent";
    };
    std::vector<ErrorDetail> details;
    for (const validation::Finding& f : report.errors) details.push_back({code_of(f), f.path + " " + f.message, f.path});
    const validation::Finding& first = report.errors.front();
    std::string message = "The request body is invalid: " + first.path + " " + first.message;
    if (report.errors.size() > 1) message += " (and " + std::to_string(report.errors.size() - 1) + " more in details)";
    throw CloudError(400, code_of(first), message, first.path, std::move(details));
}

std::string resource_ref(const Params& p, std::initializer_list<const char*> names) {
    std::string ref = p["subscriptionId"] + "$" + p["resourceGroupName"];
    for (const char* name : names) ref += "$" + p[name];
    return ref;
}

}  // namespace bai::arm
