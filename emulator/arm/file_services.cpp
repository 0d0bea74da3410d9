#include "emulator/arm/file_services.h"

#include <cctype>

#include "emulator/arm/cloud_error.h"
#include "emulator/arm/resource_ids.h"
#include "emulator/arm/resource_view.h"
#include "emulator/arm/storage_account_services.h"
#include "fake_storage/engine/share_snapshot_names.h"
#include "fake_storage/engine/storage_error.h"
#include "fake_storage/http/service_properties_xml.h"

namespace bai::arm {
// Named, not anonymous: the unity build puts this file beside blob_services.cpp's helpers.
namespace file_services {

using nlohmann::json;

constexpr const char* kFileAccountPath =
    "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.Storage/"
    "storageAccounts/{accountName}";

json settings_of(ArmContext& ctx, const Params& p) {
    return ctx.blobs.service_settings().get(p["accountName"], "file", storage::default_file_service_properties());
}

json file_service_view(const std::optional<StoredResource>& account, const Params& p, const json& settings) {
    const json policy = settings.value("ShareDeleteRetentionPolicy", json::object());
    json retention = {{"enabled", policy.value("Enabled", false)}};
    if (policy.contains("Days")) retention["days"] = policy["Days"];
    const json smb = settings.value("ProtocolSettings", json::object()).value("SMB", json::object());
    json smb_view = {{"multichannel", {{"enabled", smb.value("Multichannel", json::object()).value("Enabled", false)}}}};
    for (auto [xml, arm] : {std::pair{"Versions", "versions"}, std::pair{"AuthenticationMethods", "authenticationMethods"},
                            std::pair{"KerberosTicketEncryption", "kerberosTicketEncryption"},
                            std::pair{"ChannelEncryption", "channelEncryption"}}) {
        if (smb.contains(xml)) smb_view[arm] = smb[xml];
    }
    json out = {{"id", storage_account_id(p) + "/fileServices/default"},
                {"name", "default"},
                {"type", "Microsoft.Storage/storageAccounts/fileServices"},
                {"properties", {{"shareDeleteRetentionPolicy", retention}, {"protocolSettings", {{"smb", smb_view}}}}}};
    if (account && account->body.contains("sku")) out["sku"] = account->body["sku"];
    return out;
}

bool require_boolean(const json& value, const std::string& path) {
    if (!value.is_boolean()) throw bad_request("InvalidRequestPropertyValue", path + " must be a boolean", path);
    return value.get<bool>();
}

// PUT and PATCH: what the body names changes, the rest stays (az sends back what it read).
void set_file_properties(ArmContext& ctx, const ArmRequest& req, const Params& p, httplib::Response& res) {
    std::optional<StoredResource> account = require_service_account(ctx, p);
    json body = req.json_body().value_or(json::object());
    if (!body.is_object()) throw bad_request("InvalidRequestContent", "The request content must be an object");
    const json given = body.value("properties", json::object());
    if (!given.is_object()) throw bad_request("InvalidRequestContent", "properties must be an object", "properties");
    json update = json::object();
    if (given.contains("shareDeleteRetentionPolicy") && !given["shareDeleteRetentionPolicy"].is_null()) {
        const std::string path = "properties.shareDeleteRetentionPolicy";
        const json& policy = given["shareDeleteRetentionPolicy"];
        if (!policy.is_object()) throw bad_request("InvalidRequestPropertyValue", path + " must be an object", path);
        json out = {{"Enabled", policy.contains("enabled") ? require_boolean(policy["enabled"], path + ".enabled") : false}};
        if (out["Enabled"].get<bool>()) {
            const json days = policy.value("days", json());
            if (days.is_null()) {
                out["Days"] = 7;  // the portal's and the CLI's default
            } else if (!days.is_number_integer() || days.get<long long>() < 1 || days.get<long long>() > 365) {
                throw bad_request("InvalidRequestPropertyValue", path + ".days must be an integer from 1 to 365", path + ".days");
            } else {
                out["Days"] = days;
            }
        }
        update["ShareDeleteRetentionPolicy"] = out;
    }
    const json smb = given.value("protocolSettings", json::object()).value("smb", json::object());
    if (smb.is_object() && !smb.empty()) {
        json settings = settings_of(ctx, p).value("ProtocolSettings", json::object());
        json& stored = settings["SMB"];
        if (smb.contains("multichannel") && smb["multichannel"].is_object() && smb["multichannel"].contains("enabled")) {
            stored["Multichannel"] = {{"Enabled", require_boolean(smb["multichannel"]["enabled"],
                                                               "properties.protocolSettings.smb.multichannel.enabled")}};
        }
        for (auto [xml, arm] : {std::pair{"Versions", "versions"}, std::pair{"AuthenticationMethods", "authenticationMethods"},
                                std::pair{"KerberosTicketEncryption", "kerberosTicketEncryption"},
                                std::pair{"ChannelEncryption", "channelEncryption"}}) {
            if (smb.contains(arm) && smb[arm].is_string()) stored[xml] = smb[arm];
        }
        update["ProtocolSettings"] = settings;
    }
    storage::ServiceSettings& settings = ctx.blobs.service_settings();
    settings.update(p["accountName"], "file", storage::default_file_service_properties(),
                    [&](json stored) { return storage::merge_service_properties(std::move(stored), update); });
    send_json(res, 200, file_service_view(account, p, settings_of(ctx, p)));
}

// POST .../fileServices/default/shares/SHARE/restore {deletedShareName, deletedShareVersion}.
void restore_share(ArmContext& ctx, const ArmRequest& req, const Params& p, httplib::Response& res) {
    require_service_account(ctx, p);
    json body = req.json_body().value_or(json::object());
    const json name = body.is_object() ? body.value("deletedShareName", json()) : json();
    const json version = body.is_object() ? body.value("deletedShareVersion", json()) : json();
    if (!name.is_string() || !version.is_string() || !storage::deleted_share_time(version.get<std::string>())) {
        throw bad_request("InvalidRequestPropertyValue", "deletedShareName and deletedShareVersion are required", "deletedShareVersion");
    }
    std::string upper = version.get<std::string>();
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    const json policy = settings_of(ctx, p).value("ShareDeleteRetentionPolicy", json::object());
    const int days = policy.value("Days", json(7)).is_number_integer() ? policy.value("Days", json(7)).get<int>() : 7;
    try {
        ctx.files.undelete_share(p["accountName"], p["shareName"], name.get<std::string>(), upper,
                                 time::now() - std::chrono::hours(24) * days);
    } catch (const storage::StorageError& e) {
        throw CloudError(e.status(), e.code(), e.what());
    }
    res.status = 200;
}

}  // namespace file_services

using namespace file_services;

void add_file_service_routes(Router& router, ArmContext& ctx) {
    const std::string ns = "Microsoft.Storage/storageAccounts/fileServices/";
    const std::string service = std::string(kFileAccountPath) + "/fileServices/default";
    router.add("GET", service, Versions::any_dated, ns + "read",
               [&ctx](const ArmRequest&, const Params& p, httplib::Response& res) {
                   send_json(res, 200, file_service_view(require_service_account(ctx, p), p, settings_of(ctx, p)));
               });
    for (const char* method : {"PUT", "PATCH"}) {
        router.add(method, service, Versions::any_dated, ns + "write",
                   [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) { set_file_properties(ctx, req, p, res); });
    }
    router.add("GET", std::string(kFileAccountPath) + "/fileServices", Versions::any_dated, ns + "read",
               [&ctx](const ArmRequest&, const Params& p, httplib::Response& res) {
                   send_json(res, 200, {{"value", json::array({file_service_view(require_service_account(ctx, p), p, settings_of(ctx, p))})}});
               });
    router.add("POST", service + "/shares/{shareName}/restore", Versions::any_dated, ns + "shares/action",
               [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) { restore_share(ctx, req, p, res); });
}

}  // namespace bai::arm
