#include "emulator/arm/blob_services.h"

#include "emulator/arm/cloud_error.h"
#include "emulator/arm/resource_view.h"
#include "emulator/arm/storage_account_services.h"
#include "fake_storage/http/service_properties_xml.h"

namespace bai::arm {
namespace {

using nlohmann::json;

constexpr const char* kServicePath =
    "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.Storage/"
    "storageAccounts/{accountName}/blobServices/default";
constexpr const char* kServicesPath =
    "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.Storage/"
    "storageAccounts/{accountName}/blobServices";

json retention_view(const json& policy) {
    json out = {{"enabled", policy.value("Enabled", false)}};
    if (policy.contains("Days")) out["days"] = policy["Days"];
    if (policy.contains("AllowPermanentDelete")) out["allowPermanentDelete"] = policy["AllowPermanentDelete"];
    return out;
}

std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> out;
    size_t start = 0;
    while (start <= text.size() && !text.empty()) {
        size_t comma = text.find(',', start);
        if (comma == std::string::npos) comma = text.size();
        if (comma > start) out.push_back(text.substr(start, comma - start));
        start = comma + 1;
    }
    return out;
}

std::string join_list(const json& values) {
    std::string out;
    for (const json& v : values) out += (out.empty() ? "" : ",") + v.get<std::string>();
    return out;
}

json view(const std::optional<StoredResource>& account, const Params& p, const json& settings) {
    json rules = json::array();
    for (const json& rule : settings.value("Cors", json::array())) {
        rules.push_back({{"allowedOrigins", split_list(rule.value("AllowedOrigins", std::string()))},
                         {"allowedMethods", split_list(rule.value("AllowedMethods", std::string()))},
                         {"maxAgeInSeconds", rule.value("MaxAgeInSeconds", 0LL)},
                         {"exposedHeaders", split_list(rule.value("ExposedHeaders", std::string()))},
                         {"allowedHeaders", split_list(rule.value("AllowedHeaders", std::string()))}});
    }
    json properties = {{"cors", {{"corsRules", rules}}},
                       {"deleteRetentionPolicy", retention_view(settings.value("DeleteRetentionPolicy", json::object()))}};
    if (settings.contains("IsVersioningEnabled")) properties["isVersioningEnabled"] = settings["IsVersioningEnabled"];
    if (settings.contains("LastAccessTimeTrackingEnabled")) {
        // The service's one policy: block blobs, a day's granularity.
        properties["lastAccessTimeTrackingPolicy"] = {{"enable", settings["LastAccessTimeTrackingEnabled"]},
                                                      {"name", "AccessTimeTracking"},
                                                      {"trackingGranularityInDays", 1},
                                                      {"blobType", json::array({"blockBlob"})}};
    }
    if (settings.contains("ContainerDeleteRetentionPolicy")) {
        properties["containerDeleteRetentionPolicy"] = retention_view(settings["ContainerDeleteRetentionPolicy"]);
    }
    if (settings.contains("DefaultServiceVersion")) properties["defaultServiceVersion"] = settings["DefaultServiceVersion"];
    json out = {{"id", storage_account_id(p) + "/blobServices/default"},
                {"name", "default"},
                {"type", "Microsoft.Storage/storageAccounts/blobServices"},
                {"properties", properties}};
    if (account && account->body.contains("sku")) out["sku"] = account->body["sku"];
    return out;
}

bool require_bool(const json& value, const std::string& path) {
    if (!value.is_boolean()) throw bad_request("InvalidRequestPropertyValue", path + " must be a boolean", path);
    return value.get<bool>();
}

// A deleteRetentionPolicy / containerDeleteRetentionPolicy: enabled, and days of 1 to 365 when
// enabled (the service's range).
json retention_setting(const json& given, const std::string& path) {
    if (!given.is_object()) throw bad_request("InvalidRequestPropertyValue", path + " must be an object", path);
    json out = {{"Enabled", given.contains("enabled") ? require_bool(given["enabled"], path + ".enabled") : false}};
    if (given.contains("days") && !given["days"].is_null()) {
        const json& days = given["days"];
        if (!days.is_number_integer() || days.get<long long>() < 1 || days.get<long long>() > 365) {
            throw bad_request("InvalidRequestPropertyValue", path + ".days must be an integer from 1 to 365", path + ".days");
        }
        if (out["Enabled"].get<bool>()) out["Days"] = days;
    } else if (out["Enabled"].get<bool>()) {
        out["Days"] = 7;  // the portal's and the CLI's default
    }
    if (given.contains("allowPermanentDelete") && !given["allowPermanentDelete"].is_null()) {
        out["AllowPermanentDelete"] = require_bool(given["allowPermanentDelete"], path + ".allowPermanentDelete");
    }
    return out;
}

json cors_setting(const json& given) {
    if (!given.is_object() || (given.contains("corsRules") && !given["corsRules"].is_array())) {
        throw bad_request("InvalidRequestPropertyValue", "properties.cors.corsRules must be an array", "properties.cors");
    }
    json rules = json::array();
    for (const json& rule : given.value("corsRules", json::array())) {
        auto list = [&](const char* name) {
            const json& v = rule.is_object() ? rule.value(name, json()) : json();
            if (!v.is_array() || v.empty()) {
                throw bad_request("InvalidRequestPropertyValue",
                                  std::string("properties.cors.corsRules[].") + name + " must be a list of strings",
                                  "properties.cors");
            }
            for (const json& s : v) {
                if (!s.is_string()) throw bad_request("InvalidRequestPropertyValue", std::string(name) + " must hold strings");
            }
            return join_list(v);
        };
        const json& max_age = rule.value("maxAgeInSeconds", json(0));
        if (!max_age.is_number_integer() || max_age.get<long long>() < 0) {
            throw bad_request("InvalidRequestPropertyValue", "maxAgeInSeconds must be a non-negative integer");
        }
        rules.push_back({{"AllowedOrigins", list("allowedOrigins")},
                         {"AllowedMethods", list("allowedMethods")},
                         {"AllowedHeaders", list("allowedHeaders")},
                         {"ExposedHeaders", list("exposedHeaders")},
                         {"MaxAgeInSeconds", max_age.get<long long>()}});
    }
    if (rules.size() > 5) throw bad_request("InvalidRequestPropertyValue", "at most 5 CORS rules", "properties.cors");
    return rules;
}

// PUT (and PATCH): what the body's properties name changes; the rest stays (az reads the
// properties, changes some and sends them all back).
void set_properties(ArmContext& ctx, const ArmRequest& req, const Params& p, httplib::Response& res) {
    std::optional<StoredResource> account = require_service_account(ctx, p);
    json body = req.json_body().value_or(json::object());
    if (!body.is_object()) throw bad_request("InvalidRequestContent", "The request content must be an object");
    const json given = body.value("properties", json::object());
    if (!given.is_object()) throw bad_request("InvalidRequestContent", "properties must be an object", "properties");
    json update = json::object();
    if (given.contains("isVersioningEnabled") && !given["isVersioningEnabled"].is_null()) {
        update["IsVersioningEnabled"] = require_bool(given["isVersioningEnabled"], "properties.isVersioningEnabled");
    }
    if (given.contains("lastAccessTimeTrackingPolicy") && !given["lastAccessTimeTrackingPolicy"].is_null()) {
        const json& policy = given["lastAccessTimeTrackingPolicy"];
        if (!policy.is_object() || !policy.contains("enable")) {
            throw bad_request("InvalidRequestPropertyValue", "properties.lastAccessTimeTrackingPolicy.enable is required",
                              "properties.lastAccessTimeTrackingPolicy");
        }
        update["LastAccessTimeTrackingEnabled"] =
            require_bool(policy["enable"], "properties.lastAccessTimeTrackingPolicy.enable");
    }
    if (given.contains("deleteRetentionPolicy") && !given["deleteRetentionPolicy"].is_null()) {
        update["DeleteRetentionPolicy"] = retention_setting(given["deleteRetentionPolicy"], "properties.deleteRetentionPolicy");
    }
    if (given.contains("containerDeleteRetentionPolicy") && !given["containerDeleteRetentionPolicy"].is_null()) {
        update["ContainerDeleteRetentionPolicy"] =
            retention_setting(given["containerDeleteRetentionPolicy"], "properties.containerDeleteRetentionPolicy");
    }
    if (given.contains("cors") && !given["cors"].is_null()) update["Cors"] = cors_setting(given["cors"]);
    if (given.contains("defaultServiceVersion") && !given["defaultServiceVersion"].is_null()) {
        const json& v = given["defaultServiceVersion"];
        const bool dated = v.is_string() && v.get<std::string>().size() == 10 && v.get<std::string>() >= "2009-09-19";
        if (!dated) {
            throw bad_request("InvalidRequestPropertyValue", "properties.defaultServiceVersion must be a service version",
                              "properties.defaultServiceVersion");
        }
        update["DefaultServiceVersion"] = v;
    }
    storage::ServiceSettings& settings = ctx.blobs.service_settings();
    settings.update(p["accountName"], "blob", storage::default_blob_service_properties(),
                    [&](json stored) { return storage::merge_service_properties(std::move(stored), update); });
    send_json(res, 200, view(account, p, settings.get(p["accountName"], "blob", storage::default_blob_service_properties())));
}

void get_properties(ArmContext& ctx, const Params& p, httplib::Response& res) {
    std::optional<StoredResource> account = require_service_account(ctx, p);
    send_json(res, 200,
              view(account, p, ctx.blobs.service_settings().get(p["accountName"], "blob", storage::default_blob_service_properties())));
}

}  // namespace

void add_blob_service_routes(Router& router, ArmContext& ctx) {
    const std::string ns = "Microsoft.Storage/storageAccounts/blobServices/";
    router.add("GET", kServicePath, Versions::any_dated, ns + "read",
               [&ctx](const ArmRequest&, const Params& p, httplib::Response& res) { get_properties(ctx, p, res); });
    router.add("PUT", kServicePath, Versions::any_dated, ns + "write",
               [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) { set_properties(ctx, req, p, res); });
    router.add("PATCH", kServicePath, Versions::any_dated, ns + "write",
               [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) { set_properties(ctx, req, p, res); });
    router.add("GET", kServicesPath, Versions::any_dated, ns + "read",
               [&ctx](const ArmRequest&, const Params& p, httplib::Response& res) {
                   std::optional<StoredResource> account = require_service_account(ctx, p);
                   json settings = ctx.blobs.service_settings().get(p["accountName"], "blob",
                                                                   storage::default_blob_service_properties());
                   send_json(res, 200, {{"value", json::array({view(account, p, settings)})}});
               });
}

}  // namespace bai::arm
