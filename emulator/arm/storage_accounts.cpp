#include "emulator/arm/storage_accounts.h"

#include "common/crypto/random_id.h"
#include "common/http/proxied_host.h"
#include "common/log/logger.h"
#include "common/text/percent_encoding.h"
#include "common/time/timestamps.h"
#include "emulator/arm/cloud_error.h"
#include "emulator/arm/resource_ids.h"
#include "emulator/arm/resource_view.h"
#include "emulator/arm/text.h"

namespace bai::arm {
namespace {

constexpr const char* kAccountPath =
    "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.Storage/"
    "storageAccounts/{accountName}";
constexpr const char* kKinds[] = {"Storage", "StorageV2", "BlobStorage", "FileStorage", "BlockBlobStorage"};
constexpr const char* kSkus[] = {"Standard_LRS", "Standard_GRS", "Standard_RAGRS", "Standard_ZRS", "Premium_LRS",
                                 "Premium_ZRS", "Standard_GZRS", "Standard_RAGZRS"};

std::string account_id(const Params& p) {
    return group_id(p) + "/providers/Microsoft.Storage/storageAccounts/" + p["accountName"];
}

std::string require_string(const std::string& path, const nlohmann::json& value) {
    if (value.is_null()) throw bad_request("MissingRequiredProperty", path + " is required", path);
    if (!value.is_string()) throw bad_request("InvalidRequestContent", path + " must be a string", path);
    return value.get<std::string>();
}

std::string one_of(const std::string& value, const std::string& path, std::initializer_list<const char*> allowed) {
    std::string list;
    for (const char* a : allowed) {
        if (iequals(a, value)) return a;
        list += list.empty() ? a : std::string(", ") + a;
    }
    throw bad_request("InvalidRequestContent", path + " must be one of " + list + ", not '" + value + "'", path);
}

// Azure's region pairs: where a geo-redundant account keeps its second copy.
std::string paired_region(const std::string& location) {
    static const std::pair<const char*, const char*> kPairs[] = {
        {"eastus", "westus"},           {"westus", "eastus"},
        {"eastus2", "centralus"},       {"centralus", "eastus2"},
        {"northcentralus", "southcentralus"}, {"southcentralus", "northcentralus"},
        {"westus2", "westcentralus"},   {"westcentralus", "westus2"},
        {"westus3", "eastus"},          {"canadacentral", "canadaeast"},
        {"canadaeast", "canadacentral"}, {"brazilsouth", "southcentralus"},
        {"northeurope", "westeurope"},  {"westeurope", "northeurope"},
        {"uksouth", "ukwest"},          {"ukwest", "uksouth"},
        {"francecentral", "francesouth"}, {"francesouth", "francecentral"},
        {"germanywestcentral", "germanynorth"}, {"germanynorth", "germanywestcentral"},
        {"switzerlandnorth", "switzerlandwest"}, {"switzerlandwest", "switzerlandnorth"},
        {"norwayeast", "norwaywest"},   {"norwaywest", "norwayeast"},
        {"eastasia", "southeastasia"},  {"southeastasia", "eastasia"},
        {"japaneast", "japanwest"},     {"japanwest", "japaneast"},
        {"koreacentral", "koreasouth"}, {"koreasouth", "koreacentral"},
        {"australiaeast", "australiasoutheast"}, {"australiasoutheast", "australiaeast"},
        {"australiacentral", "australiacentral2"}, {"australiacentral2", "australiacentral"},
        {"centralindia", "southindia"}, {"southindia", "centralindia"}, {"westindia", "southindia"},
        {"southafricanorth", "southafricawest"}, {"southafricawest", "southafricanorth"},
        {"uaenorth", "uaecentral"},     {"uaecentral", "uaenorth"}};
    const std::string key = lower(location);
    for (const auto& [region, pair] : kPairs) {
        if (key == region) return pair;
    }
    return {};
}

// The keys' creation times are answered from 2021-02-01 (the version that brought them, with
// keyPolicy: azure-mgmt-storage 17.1.0; recorded in July 2021 through 2021-04-01).
bool with_key_creation_times(const std::string& api_version) { return api_version >= "2021-02-01"; }

// When a key was made: the account's creation, or its last regeneration. Accounts stored before
// the emulator kept these times show their creation time.
nlohmann::json key_created(const nlohmann::json& stored, const char* key) {
    const nlohmann::json created = stored.value("_keyCreationTime", nlohmann::json::object());
    if (created.contains(key)) return created[key];
    return stored["properties"].value("creationTime", nlohmann::json(""));
}

// An account as `api_version` shows it: the endpoints the emulator serves (Blob and File: it has
// no Queue or Table service), Microsoft-managed encryption of both, the network rules that let
// everything in, and from 2019-06-01 the key type and private endpoint connections (recorded).
nlohmann::json view(const ArmContext& ctx, const nlohmann::json& stored, const std::string& api_version) {
    nlohmann::json v = redacted(stored);
    const std::string name = stored["name"];
    nlohmann::json& p = v["properties"];
    // Asked at management.azure.com through the proxy front door: the cloud's endpoints, which the
    // front door serves; else the emulator's path-style ones.
    if (!http::proxied_host().empty()) {
        p["primaryEndpoints"] = {{"blob", "https://" + name + ".blob.core.windows.net/"},
                                 {"file", "https://" + name + ".file.core.windows.net/"}};
    } else {
        p["primaryEndpoints"] = {{"blob", ctx.blob_endpoint + "/" + name + "/"}, {"file", ctx.file_endpoint + "/" + name + "/"}};
    }
    const bool newer = api_version >= "2019-06-01";
    const nlohmann::json created = p.value("creationTime", nlohmann::json(""));
    nlohmann::json service{{"enabled", true}, {"lastEnabledTime", created}};
    if (newer) service["keyType"] = "Account";
    p["encryption"] = {{"keySource", "Microsoft.Storage"}, {"services", {{"blob", service}, {"file", service}}}};
    p["networkAcls"] = {{"bypass", "AzureServices"},
                        {"defaultAction", "Allow"},
                        {"ipRules", nlohmann::json::array()},
                        {"virtualNetworkRules", nlohmann::json::array()}};
    if (newer) p["privateEndpointConnections"] = nlohmann::json::array();
    if (with_key_creation_times(api_version)) {
        p["keyCreationTime"] = {{"key1", key_created(stored, "key1")}, {"key2", key_created(stored, "key2")}};
    }
    // A geo-redundant account names its paired region (recorded: Standard_GRS in westus, second
    // copy in eastus). The emulator keeps one copy; it serves no secondary endpoints.
    const std::string sku = stored["sku"].value("name", "");
    const std::string secondary = paired_region(stored.value("location", ""));
    if (sku.find("GRS") != std::string::npos || sku.find("GZRS") != std::string::npos) {
        if (!secondary.empty()) {
            p["secondaryLocation"] = secondary;
            p["statusOfSecondary"] = "available";
        }
    }
    return v;
}

// The keys' permissions were "Full" on 2017-10-01 and "FULL" on 2019-06-01 (both recorded); the
// versions between follow the later one from 2018-03-01, a choice.
nlohmann::json keys_view(const nlohmann::json& stored, const std::string& api_version) {
    const nlohmann::json& keys = stored["_keys"];
    const char* permissions = api_version < "2018-03-01" ? "Full" : "FULL";
    nlohmann::json list = nlohmann::json::array();
    for (const char* name : {"key1", "key2"}) {
        nlohmann::json key{{"keyName", name}, {"value", keys[name]}, {"permissions", permissions}};
        if (with_key_creation_times(api_version)) key["creationTime"] = key_created(stored, name);
        list.push_back(std::move(key));
    }
    return {{"keys", std::move(list)}};
}

// Microsoft.Storage's empty 202s say `text/plain; charset=utf-8` (recorded in 2020; in 2017 they
// had no Content-Type: the latest recording wins).
void empty_text(httplib::Response& res) {
    res.body.clear();
    res.set_header("Content-Type", "text/plain; charset=utf-8");
}

// Microsoft.Storage answers JSON as `application/json`, without a charset (recorded), except
// its subscription-wide list, which says `application/json; charset=utf-8` (recorded in December
// 2019 and July 2021; send_json's own).
void storage_json(httplib::Response& res) {
    if (res.body.empty()) return;
    res.headers.erase("Content-Type");
    res.set_header("Content-Type", "application/json");
}

// A new account's create is a long-running operation, as in ARM: 202 and a Location,
// .../providers/Microsoft.Storage/locations/{l}/asyncoperations/{id}?monitor=true, which answers
// 202 until the operation ends, then 200 with the account. The account is usable at once.
void send_account_accepted(ArmContext& ctx, const ArmRequest& req, const Params& p, const std::string& id,
                           const std::string& location, httplib::Response& res) {
    Operation op;
    op.kind = "create";
    op.resource_id = id;
    op.provider = "Microsoft.Storage";
    op.subscription = p["subscriptionId"];
    op.location = location;
    op.api_version = req.api_version();
    op = ctx.operations.begin(op);
    res.status = 202;
    res.set_header("Location", req.base_url + "/subscriptions/" + op.subscription + "/providers/Microsoft.Storage/locations/" +
                                   text::percent_encode(location) + "/asyncoperations/" + op.id +
                                   "?monitor=true&api-version=" + op.api_version);
    OperationTracker::ask_back(res);
    empty_text(res);
}

bool name_taken(const ArmContext& ctx, const std::string& name, const std::string& own_key) {
    if (!ctx.accounts.find(name)) return false;
    for (const StoredResource& r : ctx.store.all_of_type(kind::kStorageAccount)) {
        if (r.body["name"] == name) return r.key != own_key;
    }
    return true;  // devstoreaccount1 or an --account flag
}

void put_account(ArmContext& ctx, const ArmRequest& req, const Params& p, httplib::Response& res) {
    StoredResource group = require_group(ctx, p);
    nlohmann::json body = req.json_body().value_or(nlohmann::json::object());
    std::string location = require_string("location", body.value("location", nlohmann::json()));
    nlohmann::json sku = body.value("sku", nlohmann::json());
    if (!sku.is_object()) throw bad_request("MissingRequiredProperty", "sku is required", "sku");
    std::string sku_name = one_of(require_string("sku.name", sku.value("name", nlohmann::json())), "sku.name",
                                  {kSkus[0], kSkus[1], kSkus[2], kSkus[3], kSkus[4], kSkus[5], kSkus[6], kSkus[7]});
    std::string kind_name = one_of(require_string("kind", body.value("kind", nlohmann::json())), "kind",
                                   {kKinds[0], kKinds[1], kKinds[2], kKinds[3], kKinds[4]});
    const nlohmann::json sku_view{{"name", sku_name},
                                  {"tier", sku_name.rfind("Premium", 0) == 0 ? "Premium" : "Standard"}};
    nlohmann::json tags = body.value("tags", nlohmann::json::object());
    if (!tags.is_object()) throw bad_request("InvalidRequestContent", "tags must be an object", "tags");

    const std::string id = account_id(p);
    const std::string name = p["accountName"];
    if (name_taken(ctx, name, resource_key(id))) {
        throw CloudError(409, "StorageAccountAlreadyTaken", "The storage account named " + name + " is already taken.");
    }
    if (auto existing = ctx.store.get(id)) {
        auto updated = ctx.store.update(id, [&](nlohmann::json& a) {
            a["tags"] = tags;
            a["sku"] = sku_view;
            return true;
        });
        send_resource(res, *updated, view(ctx, updated->body, req.api_version()));
        return storage_json(res);
    }
    std::string now = arm_time(time::now());
    // As requested; else the service's default, false before 2019-04-01 and true from then on.
    bool https_only = req.api_version() >= "2019-04-01";
    if (body.contains("properties") && body["properties"].is_object() &&
        body["properties"].contains("supportsHttpsTrafficOnly")) {
        if (!body["properties"]["supportsHttpsTrafficOnly"].is_boolean()) {
            throw bad_request("InvalidRequestContent", "properties.supportsHttpsTrafficOnly must be a boolean",
                              "properties.supportsHttpsTrafficOnly");
        }
        https_only = body["properties"]["supportsHttpsTrafficOnly"].get<bool>();
    }
    nlohmann::json account{
        {"id", id},
        {"name", name},
        {"type", "Microsoft.Storage/storageAccounts"},
        {"location", location},
        {"tags", tags},
        {"kind", kind_name},
        {"sku", sku_view},
        {"properties",
         {{"provisioningState", "Succeeded"},
          {"creationTime", now},
          {"primaryLocation", location},
          {"statusOfPrimary", "available"},
          {"supportsHttpsTrafficOnly", https_only}}},
        {"_keys", {{"key1", crypto::random_base64(64)}, {"key2", crypto::random_base64(64)}}},
        {"_keyCreationTime", {{"key1", now}, {"key2", now}}}};
    if (!ctx.store.create(id, group.body["id"].get<std::string>(), kind::kStorageAccount, account)) {
        throw CloudError(409, "Conflict", "The storage account " + name + " is being created.");
    }
    StoredResource stored = *ctx.store.get(id);
    ctx.accounts.put(account_of(stored));
    send_account_accepted(ctx, req, p, id, location, res);
}

StoredResource require_account(const ArmContext& ctx, const Params& p) {
    check_group(ctx, p);
    std::optional<StoredResource> found = ctx.store.get(account_id(p));
    if (!found) {
        CloudError e(404, "ResourceNotFound",
                     "The Resource 'Microsoft.Storage/storageAccounts/" + p["accountName"] +
                         "' under resource group '" + p["resourceGroupName"] + "' was not found.");
        e.headers.emplace_back("x-ms-failure-cause", "gateway");
        throw e;
    }
    return *found;
}

// Update (PATCH, `az storage account update`): what the body names changes (tags replaced whole,
// sku, kind, and the properties below), the rest stays; answered 200 with the account.
void update_account(ArmContext& ctx, const ArmRequest& req, const Params& p, httplib::Response& res) {
    require_account(ctx, p);
    nlohmann::json body = req.json_body().value_or(nlohmann::json::object());
    if (!body.is_object()) throw bad_request("InvalidRequestContent", "The request content must be an object", "");
    std::optional<nlohmann::json> tags;
    if (body.contains("tags")) {
        if (!body["tags"].is_object()) throw bad_request("InvalidRequestContent", "tags must be an object", "tags");
        tags = body["tags"];
    }
    std::optional<std::string> sku_name;
    if (body.contains("sku") && body["sku"].is_object() && body["sku"].contains("name")) {
        sku_name = one_of(require_string("sku.name", body["sku"]["name"]), "sku.name",
                          {kSkus[0], kSkus[1], kSkus[2], kSkus[3], kSkus[4], kSkus[5], kSkus[6], kSkus[7]});
    }
    std::optional<std::string> kind_name;
    if (body.contains("kind")) {
        kind_name = one_of(require_string("kind", body["kind"]), "kind", {kKinds[0], kKinds[1], kKinds[2], kKinds[3], kKinds[4]});
    }
    nlohmann::json properties = nlohmann::json::object();
    if (body.contains("properties")) {
        const nlohmann::json& given = body["properties"];
        if (!given.is_object()) throw bad_request("InvalidRequestContent", "properties must be an object", "properties");
        for (const char* flag : {"supportsHttpsTrafficOnly", "allowBlobPublicAccess", "allowSharedKeyAccess"}) {
            if (!given.contains(flag) || given[flag].is_null()) continue;
            if (!given[flag].is_boolean()) {
                throw bad_request("InvalidRequestContent", std::string("properties.") + flag + " must be a boolean",
                                  std::string("properties.") + flag);
            }
            properties[flag] = given[flag];
        }
        if (given.contains("accessTier") && !given["accessTier"].is_null()) {
            properties["accessTier"] = one_of(require_string("properties.accessTier", given["accessTier"]),
                                              "properties.accessTier", {"Hot", "Cool"});
        }
        if (given.contains("minimumTlsVersion") && !given["minimumTlsVersion"].is_null()) {
            properties["minimumTlsVersion"] = one_of(require_string("properties.minimumTlsVersion", given["minimumTlsVersion"]),
                                                     "properties.minimumTlsVersion", {"TLS1_0", "TLS1_1", "TLS1_2"});
        }
    }
    auto updated = ctx.store.update(account_id(p), [&](nlohmann::json& a) {
        if (tags) a["tags"] = *tags;
        if (sku_name) a["sku"] = {{"name", *sku_name}, {"tier", sku_name->rfind("Premium", 0) == 0 ? "Premium" : "Standard"}};
        if (kind_name) a["kind"] = *kind_name;
        for (const auto& [name, value] : properties.items()) a["properties"][name] = value;
        return true;
    });
    send_resource(res, *updated, view(ctx, updated->body, req.api_version()));
    storage_json(res);
}

void regenerate_key(ArmContext& ctx, const ArmRequest& req, const Params& p, httplib::Response& res) {
    require_account(ctx, p);
    nlohmann::json body = req.json_body().value_or(nlohmann::json::object());
    std::string key_name = require_string("keyName", body.value("keyName", nlohmann::json()));
    key_name = one_of(key_name, "keyName", {"key1", "key2"});
    auto updated = ctx.store.update(account_id(p), [&](nlohmann::json& a) {
        a["_keys"][key_name] = crypto::random_base64(64);
        a["_keyCreationTime"][key_name] = arm_time(time::now());
        return true;
    });
    ctx.accounts.put(account_of(*updated));
    send_json(res, 200, keys_view(updated->body, req.api_version()));
    storage_json(res);
}

void list_accounts(ArmContext& ctx, const ArmRequest& req, const std::string& scope, httplib::Response& res) {
    Page page = ctx.store.under(scope, kind::kStorageAccount, skip_token(req), 1000);
    nlohmann::json items = nlohmann::json::array();
    for (const StoredResource& a : page.items) items.push_back(view(ctx, a.body, req.api_version()));
    send_page(res, req, items, page.next_after);
}

}  // namespace

// An account deleted takes its containers (leased ones too), shares and service properties with
// it, as in the cloud: a new account of that name starts empty.
void forget_storage_account(ArmContext& ctx, const std::string& account) {
    ctx.accounts.remove(account);
    ctx.blobs.service_settings().forget(account);
    storage::ListOptions everything;
    for (;;) {
        storage::ContainerListPage page = ctx.blobs.list_containers(account, everything);
        for (const storage::ContainerInfo& container : page.containers) {
            try {
                ctx.blobs.delete_container(account, container.name, {}, /*ignore_lease=*/true);
            } catch (const std::exception& e) {
                log::error("storage account " + account + " deleted: its container " + container.name + " stays: " + e.what());
            }
        }
        if (page.next_marker.empty() || page.containers.empty()) break;
        everything.marker = page.next_marker;  // past one that could not go
    }
    ctx.blobs.purge_deleted_containers(account, time::TimePoint::max());  // and those soft deleted
    everything.marker.clear();
    for (;;) {
        storage::SharePage page = ctx.files.list_shares(account, everything);
        for (const storage::ShareInfo& share : page.shares) {
            try {
                ctx.files.delete_share(account, share.name, std::nullopt, /*with_snapshots=*/true);
            } catch (const std::exception& e) {
                log::error("storage account " + account + " deleted: its share " + share.name + " stays: " + e.what());
            }
        }
        if (page.next_marker.empty() || page.shares.empty()) break;
        everything.marker = page.next_marker;
    }
}


storage::Account account_of(const StoredResource& stored) {
    return {stored.body["name"], stored.body["_keys"]["key1"], stored.body["_keys"]["key2"]};
}

void register_stored_accounts(ArmContext& ctx) {
    for (const StoredResource& a : ctx.store.all_of_type(kind::kStorageAccount)) ctx.accounts.put(account_of(a));
}

void add_storage_account_routes(Router& router, ArmContext& ctx) {
    const std::string ns = "Microsoft.Storage/storageAccounts/";
    router.add("PUT", kAccountPath, Versions::any_dated, ns + "write",
               [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) { put_account(ctx, req, p, res); });
    router.add("GET", kAccountPath, Versions::any_dated, ns + "read",
               [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) {
                   StoredResource a = require_account(ctx, p);
                   send_resource(res, a, view(ctx, a.body, req.api_version()));
                   storage_json(res);
               });
    router.add("PATCH", kAccountPath, Versions::any_dated, ns + "write",
               [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) { update_account(ctx, req, p, res); });
    router.add("DELETE", kAccountPath, Versions::any_dated, ns + "delete",
               [&ctx](const ArmRequest&, const Params& p, httplib::Response& res) {
                   check_group(ctx, p);
                   auto removed = ctx.store.remove_tree(account_id(p));
                   if (!removed.empty()) forget_storage_account(ctx, p["accountName"]);
                   res.status = removed.empty() ? 204 : 200;
               });
    router.add("POST", std::string(kAccountPath) + "/listKeys", Versions::any_dated, ns + "listkeys/action",
               [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) {
                   send_json(res, 200, keys_view(require_account(ctx, p).body, req.api_version()));
                   storage_json(res);
               });
    router.add("GET", "/subscriptions/{subscriptionId}/providers/Microsoft.Storage/locations/{location}/asyncoperations/{operationId}",
               Versions::any_dated, ns + "read", [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) {
                   std::optional<Operation> op = ctx.operations.get(p["operationId"]);
                   if (!op || op->provider != "Microsoft.Storage" || !iequals(op->subscription, p["subscriptionId"])) {
                       throw CloudError(404, "OperationNotFound", "The operation " + p["operationId"] + " is not found");
                   }
                   if (op->status == "InProgress") {
                       res.status = 202;
                       res.set_header("Location", req.base_url + req.http.path + "?monitor=true&api-version=" + op->api_version);
                       OperationTracker::ask_back(res);
                       empty_text(res);
                       return;
                   }
                   std::optional<StoredResource> account = ctx.store.get(op->resource_id);
                   if (!account) throw CloudError(404, "ResourceNotFound", "The storage account of this operation is gone");
                   send_json(res, 200, view(ctx, account->body, req.api_version()));
                   storage_json(res);
               });
    router.add("POST", std::string(kAccountPath) + "/regenerateKey", Versions::any_dated, ns + "regeneratekey/action",
               [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) { regenerate_key(ctx, req, p, res); });
    router.add("GET", "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.Storage/storageAccounts",
               Versions::any_dated, ns + "read",
               [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) {
                   check_group(ctx, p);
                   list_accounts(ctx, req, group_id(p), res);
                   storage_json(res);
               });
    router.add("GET", "/subscriptions/{subscriptionId}/providers/Microsoft.Storage/storageAccounts", Versions::any_dated,
               ns + "read", [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) {
                   list_accounts(ctx, req, subscription_id(p), res);
               });
    router.add("POST", "/subscriptions/{subscriptionId}/providers/Microsoft.Storage/checkNameAvailability",
               Versions::any_dated, "Microsoft.Storage/checknameavailability/read",
               [&ctx](const ArmRequest& req, const Params&, httplib::Response& res) {
                   nlohmann::json body = req.json_body().value_or(nlohmann::json::object());
                   std::string name = require_string("name", body.value("name", nlohmann::json()));
                   try {
                       check_name("accountName", name, req.api_version());
                   } catch (const CloudError& e) {
                       return send_json(res, 200, {{"nameAvailable", false}, {"reason", "AccountNameInvalid"}, {"message", e.what()}});
                   }
                   if (ctx.accounts.find(name)) {
                       return send_json(res, 200, {{"nameAvailable", false}, {"reason", "AlreadyExists"},
                                                   {"message", "The storage account named " + name + " is already taken."}});
                   }
                   send_json(res, 200, {{"nameAvailable", true}});
               });
}

}  // namespace bai::arm
