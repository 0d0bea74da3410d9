#include "emulator/arm/batch_accounts.h"

#include <cctype>

#include "common/crypto/random_id.h"
#include "common/http/proxied_host.h"
#include "common/time/timestamps.h"
#include "emulator/arm/cloud_error.h"
#include "emulator/arm/resource_ids.h"
#include "emulator/arm/resource_view.h"
#include "emulator/arm/text.h"
#include "fake_storage/accounts/account_registry.h"

namespace bai::arm {
namespace {

constexpr const char* kBatchAccountPath =
    "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.Batch/batchAccounts/"
    "{batchAccountName}";

std::string batch_account_id(const Params& p) {
    return "/subscriptions/" + p["subscriptionId"] + "/resourceGroups/" + p["resourceGroupName"] +
           "/providers/Microsoft.Batch/batchAccounts/" + p["batchAccountName"];
}

batch::BatchAccount account_of(const nlohmann::json& stored) {
    return {stored["name"].get<std::string>(), stored["_keys"]["primary"].get<std::string>(),
            stored["_keys"]["secondary"].get<std::string>()};
}

// The account as the service shows it. accountEndpoint has the cloud's shape, no scheme, but the
// cloud's host name is the account's own (ACCOUNT.REGION.batch.azure.com) where the emulator's
// Batch endpoint serves every account: HOST:PORT/ACCOUNT, which `az batch account login` turns
// into https://HOST:PORT/ACCOUNT/ and the endpoint (plain HTTP and HTTPS on one port) takes apart.
// Asked at management.azure.com through the proxy front door, the account's endpoint is the
// cloud's own host name, which the front door serves.
nlohmann::json view(const ArmContext& ctx, const nlohmann::json& stored) {
    nlohmann::json v = redacted(stored);
    if (!http::proxied_host().empty()) {
        std::string region;
        for (char c : stored.value("location", std::string())) {
            if (c != ' ') region += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        }
        v["properties"]["accountEndpoint"] = stored["name"].get<std::string>() + "." + region + ".batch.azure.com";
        return v;
    }
    std::string endpoint = ctx.batch_endpoint;
    if (size_t scheme = endpoint.find("://"); scheme != std::string::npos) endpoint.erase(0, scheme + 3);
    v["properties"]["accountEndpoint"] = endpoint + "/" + stored["name"].get<std::string>();
    return v;
}

nlohmann::json keys_view(const nlohmann::json& stored) {
    return {{"accountName", stored["name"]}, {"primary", stored["_keys"]["primary"]},
            {"secondary", stored["_keys"]["secondary"]}};
}

StoredResource require_batch_account(const ArmContext& ctx, const Params& p) {
    check_group(ctx, p);
    std::optional<StoredResource> found = ctx.store.get(batch_account_id(p));
    if (!found) {
        throw CloudError(404, "ResourceNotFound",
                         "The Resource 'Microsoft.Batch/batchAccounts/" + p["batchAccountName"] +
                             "' under resource group '" + p["resourceGroupName"] + "' was not found.");
    }
    return *found;
}

nlohmann::json object_field(const nlohmann::json& body, const char* name) {
    if (!body.contains(name) || body[name].is_null()) return nlohmann::json::object();
    if (!body[name].is_object()) throw bad_request("InvalidRequestContent", std::string(name) + " must be an object", name);
    return body[name];
}

// properties.autoStorage.storageAccountId: a storage account ARM holds, as the service requires.
nlohmann::json auto_storage(const ArmContext& ctx, const nlohmann::json& properties) {
    if (!properties.contains("autoStorage") || properties["autoStorage"].is_null()) return nullptr;
    const nlohmann::json& given = properties["autoStorage"];
    if (!given.is_object() || !given.contains("storageAccountId") || !given["storageAccountId"].is_string()) {
        throw bad_request("InvalidRequestContent", "properties.autoStorage.storageAccountId must be a string",
                          "properties.autoStorage.storageAccountId");
    }
    const std::string id = given["storageAccountId"];
    std::optional<StoredResource> storage = ctx.store.get(id);
    if (!storage || storage->type != kind::kStorageAccount) {
        throw bad_request("InvalidStorageAccountId",
                          "The specified storage account '" + id + "' was not found or is not a storage account.",
                          "properties.autoStorage.storageAccountId");
    }
    return {{"storageAccountId", storage->body["id"]},
            {"lastKeySync", arm_time(time::now())},
            {"authenticationMode", "StorageKeys"}};
}

void put_batch_account(ArmContext& ctx, const ArmRequest& req, const Params& p, httplib::Response& res) {
    StoredResource group = require_group(ctx, p);
    nlohmann::json body = req.json_body().value_or(nlohmann::json::object());
    if (!body.is_object()) throw bad_request("InvalidRequestContent", "The request content must be an object", "");
    if (!body.contains("location") || !body["location"].is_string() || body["location"].get<std::string>().empty()) {
        throw bad_request("LocationRequired", "The location property is required for this definition.", "location");
    }
    const nlohmann::json tags = object_field(body, "tags");
    const nlohmann::json properties = object_field(body, "properties");
    const nlohmann::json storage = auto_storage(ctx, properties);
    const std::string id = batch_account_id(p);
    const std::string name = p["batchAccountName"];
    if (auto existing = ctx.store.get(id)) {
        auto updated = ctx.store.update(id, [&](nlohmann::json& a) {
            a["tags"] = tags;
            if (!storage.is_null()) a["properties"]["autoStorage"] = storage;
            return true;
        });
        return send_resource(res, *updated, view(ctx, updated->body));
    }
    // Account names are the endpoint's host names in the cloud: one account of a name.
    if (ctx.batch_accounts.find(name)) {
        throw CloudError(409, "AccountNameAlreadyExists", "An account named '" + name + "' is already in use.");
    }
    const std::string location = lower(body["location"].get<std::string>());
    nlohmann::json account{
        {"id", id},
        {"name", name},
        {"type", "Microsoft.Batch/batchAccounts"},
        {"location", location},
        {"tags", tags},
        {"identity", {{"type", "None"}}},
        {"properties",
         {{"provisioningState", "Succeeded"},
          {"poolAllocationMode", "BatchService"},
          {"dedicatedCoreQuota", 500},
          {"lowPriorityCoreQuota", 500},
          {"dedicatedCoreQuotaPerVMFamilyEnforced", false},
          {"dedicatedCoreQuotaPerVMFamily", nlohmann::json::array()},
          {"poolQuota", 100},
          {"activeJobAndJobScheduleQuota", 300},
          {"publicNetworkAccess", "Enabled"},
          {"encryption", {{"keySource", "Microsoft.Batch"}}},
          {"allowedAuthenticationModes", {"SharedKey", "AAD", "TaskAuthenticationToken"}}}},
        {"_keys", {{"primary", crypto::random_base64(64)}, {"secondary", crypto::random_base64(64)}}}};
    if (!storage.is_null()) account["properties"]["autoStorage"] = storage;
    if (!ctx.store.create(id, group.body["id"].get<std::string>(), kind::kBatchAccount, account)) {
        throw CloudError(409, "Conflict", "The Batch account " + name + " is being created.");
    }
    ctx.batch_accounts.put(account_of(account));
    // Done at once: the initial answer of the SDK's poller is the final one.
    send_resource(res, *ctx.store.get(id), view(ctx, account));
}

void patch_account(ArmContext& ctx, const ArmRequest& req, const Params& p, httplib::Response& res) {
    require_batch_account(ctx, p);
    nlohmann::json body = req.json_body().value_or(nlohmann::json::object());
    if (!body.is_object()) throw bad_request("InvalidRequestContent", "The request content must be an object", "");
    std::optional<nlohmann::json> tags;
    if (body.contains("tags")) tags = object_field(body, "tags");
    const nlohmann::json storage = auto_storage(ctx, object_field(body, "properties"));
    auto updated = ctx.store.update(batch_account_id(p), [&](nlohmann::json& a) {
        if (tags) a["tags"] = *tags;
        if (!storage.is_null()) a["properties"]["autoStorage"] = storage;
        return true;
    });
    send_resource(res, *updated, view(ctx, updated->body));
}

void regenerate_keys(ArmContext& ctx, const ArmRequest& req, const Params& p, httplib::Response& res) {
    require_batch_account(ctx, p);
    nlohmann::json body = req.json_body().value_or(nlohmann::json::object());
    const std::string which = body.is_object() && body.contains("keyName") && body["keyName"].is_string()
                                  ? body["keyName"].get<std::string>()
                                  : "";
    if (!iequals(which, "Primary") && !iequals(which, "Secondary")) {
        throw bad_request("InvalidRequestContent", "keyName must be Primary or Secondary, not '" + which + "'", "keyName");
    }
    auto updated = ctx.store.update(batch_account_id(p), [&](nlohmann::json& a) {
        a["_keys"][iequals(which, "Primary") ? "primary" : "secondary"] = crypto::random_base64(64);
        return true;
    });
    ctx.batch_accounts.put(account_of(updated->body));
    send_json(res, 200, keys_view(updated->body));
}

void list_batch_accounts(ArmContext& ctx, const ArmRequest& req, const std::string& scope, httplib::Response& res) {
    Page page = ctx.store.under(scope, kind::kBatchAccount, skip_token(req), 1000);
    nlohmann::json items = nlohmann::json::array();
    for (const StoredResource& a : page.items) items.push_back(view(ctx, a.body));
    send_page(res, req, items, page.next_after);
}

}  // namespace

void register_stored_batch_accounts(ArmContext& ctx) {
    for (const StoredResource& a : ctx.store.all_of_type(kind::kBatchAccount)) ctx.batch_accounts.put(account_of(a.body));
}

void forget_batch_account(ArmContext& ctx, const std::string& name) { ctx.batch_accounts.remove(name); }

void add_batch_account_routes(Router& router, ArmContext& ctx) {
    const std::string ns = "Microsoft.Batch/batchAccounts/";
    router.add("PUT", kBatchAccountPath, Versions::any_dated, ns + "write",
               [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) { put_batch_account(ctx, req, p, res); });
    router.add("PATCH", kBatchAccountPath, Versions::any_dated, ns + "write",
               [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) { patch_account(ctx, req, p, res); });
    router.add("GET", kBatchAccountPath, Versions::any_dated, ns + "read",
               [&ctx](const ArmRequest&, const Params& p, httplib::Response& res) {
                   StoredResource a = require_batch_account(ctx, p);
                   send_resource(res, a, view(ctx, a.body));
               });
    router.add("DELETE", kBatchAccountPath, Versions::any_dated, ns + "delete",
               [&ctx](const ArmRequest&, const Params& p, httplib::Response& res) {
                   check_group(ctx, p);
                   auto removed = ctx.store.remove_tree(batch_account_id(p));
                   if (!removed.empty()) forget_batch_account(ctx, p["batchAccountName"]);
                   res.status = removed.empty() ? 204 : 200;
               });
    router.add("POST", std::string(kBatchAccountPath) + "/listKeys", Versions::any_dated, ns + "listKeys/action",
               [&ctx](const ArmRequest&, const Params& p, httplib::Response& res) {
                   send_json(res, 200, keys_view(require_batch_account(ctx, p).body));
               });
    router.add("POST", std::string(kBatchAccountPath) + "/regenerateKeys", Versions::any_dated, ns + "regenerateKeys/action",
               [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) { regenerate_keys(ctx, req, p, res); });
    router.add("GET", "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.Batch/batchAccounts",
               Versions::any_dated, ns + "read",
               [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) {
                   list_batch_accounts(ctx, req, require_group(ctx, p).body["id"].get<std::string>(), res);
               });
    router.add("GET", "/subscriptions/{subscriptionId}/providers/Microsoft.Batch/batchAccounts", Versions::any_dated,
               ns + "read", [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) {
                   list_batch_accounts(ctx, req, "/subscriptions/" + p["subscriptionId"], res);
               });
    router.add("POST", "/subscriptions/{subscriptionId}/providers/Microsoft.Batch/locations/{location}/checkNameAvailability",
               Versions::any_dated, "Microsoft.Batch/locations/checkNameAvailability/action",
               [&ctx](const ArmRequest& req, const Params&, httplib::Response& res) {
                   nlohmann::json body = req.json_body().value_or(nlohmann::json::object());
                   const std::string name = body.is_object() ? body.value("name", "") : "";
                   if (!storage::is_valid_account_name(name)) {
                       return send_json(res, 200, {{"nameAvailable", false}, {"reason", "Invalid"},
                                                   {"message", "Account names must be 3 to 24 characters long and "
                                                               "use lower-case letters and numbers only."}});
                   }
                   if (ctx.batch_accounts.find(name)) {
                       return send_json(res, 200, {{"nameAvailable", false}, {"reason", "AlreadyExists"},
                                                   {"message", "An account named '" + name + "' is already in use."}});
                   }
                   send_json(res, 200, {{"nameAvailable", true}});
               });
    router.add("GET", "/subscriptions/{subscriptionId}/providers/Microsoft.Batch/locations/{location}/quotas",
               Versions::any_dated, "Microsoft.Batch/locations/quotas/read",
               [](const ArmRequest&, const Params&, httplib::Response& res) { send_json(res, 200, {{"accountQuota", 1000}}); });
}

}  // namespace bai::arm
