#include "emulator/arm/resource_groups.h"

#include <cctype>

#include "common/crypto/base64.h"
#include "common/time/timestamps.h"
#include "emulator/arm/cloud_error.h"
#include "emulator/arm/odata_filter.h"
#include "emulator/arm/resource_ids.h"
#include "emulator/arm/resource_view.h"
#include "emulator/arm/text.h"

namespace bai::arm {
namespace {

constexpr const char* kGroupPath = "/subscriptions/{subscriptionId}/resourcegroups/{resourceGroupName}";

// A group as one api-version shows it: ARM's answers on 2017-05-10 carried no `type` (recorded);
// on 2020-06-01 they did. The versions between follow the later one, a choice.
nlohmann::json group_view(const nlohmann::json& stored, const ArmRequest& req) {
    nlohmann::json view = redacted(stored);
    if (req.api_version() < "2018-05-01") view.erase("type");
    return view;
}

// null when the body has none: a group answers `tags` only where some were given, as ARM did.
nlohmann::json tags_of(const nlohmann::json& body, const char* path) {
    if (!body.contains("tags")) return nlohmann::json();
    const nlohmann::json& tags = body["tags"];
    if (!tags.is_object()) throw bad_request("InvalidRequestContent", std::string(path) + " must be an object", path);
    for (const auto& [name, value] : tags.items()) {
        if (!value.is_string()) {
            throw bad_request("InvalidRequestContent", std::string(path) + "." + name + " must be a string",
                              std::string(path) + "." + name);
        }
    }
    return tags;
}

void put_group(ArmContext& ctx, const ArmRequest& req, const Params& p, httplib::Response& res) {
    nlohmann::json body = req.json_body().value_or(nlohmann::json::object());
    if (!body.contains("location")) throw bad_request("MissingRequiredProperty", "location is required", "location");
    if (!body["location"].is_string() || body["location"].get<std::string>().empty()) {
        throw bad_request("InvalidRequestContent", "location must be a non-empty string", "location");
    }
    nlohmann::json tags = tags_of(body, "tags");
    const std::string id = group_id(p);
    if (auto existing = ctx.store.get(id)) {
        if (lower(existing->body["location"].get<std::string>()) != lower(body["location"].get<std::string>())) {
            throw CloudError(409, "InvalidResourceGroupLocation",
                             "Invalid resource group location '" + body["location"].get<std::string>() +
                                 "'. The Resource group already exists in location '" +
                                 existing->body["location"].get<std::string>() + "'.");
        }
        auto updated = ctx.store.update(id, [&](nlohmann::json& g) {
            if (tags.is_null()) {
                g.erase("tags");
            } else {
                g["tags"] = tags;
            }
            return true;
        });
        return send_resource(res, *updated, group_view(updated->body, req));
    }
    nlohmann::json group{{"id", id},
                         {"name", p["resourceGroupName"]},
                         {"type", "Microsoft.Resources/resourceGroups"},
                         {"location", body["location"]},
                         {"properties", {{"provisioningState", "Succeeded"}}}};
    if (!tags.is_null()) group["tags"] = tags;
    ctx.store.atomically([&] {
        remember_subscription(ctx, subscription_id(p));
        if (!ctx.store.create(id, subscription_id(p), kind::kResourceGroup, group)) {
            throw CloudError(409, "Conflict", "Resource group '" + p["resourceGroupName"] + "' is being created.");
        }
    });
    send_resource(res, *ctx.store.get(id), group_view(group, req), 201);
}

void patch_group(ArmContext& ctx, const ArmRequest& req, const Params& p, httplib::Response& res) {
    check_group(ctx, p);
    nlohmann::json body = req.json_body().value_or(nlohmann::json::object());
    std::optional<nlohmann::json> tags;
    if (body.contains("tags")) tags = tags_of(body, "tags");
    auto updated = ctx.store.update(group_id(p), [&](nlohmann::json& g) {
        if (!tags) return false;
        g["tags"] = tags->is_null() ? nlohmann::json::object() : *tags;
        return true;
    });
    send_resource(res, *updated, group_view(updated->body, req));
}

// ARM's token for a group's deletion job, as its Location URLs carry it:
// base64url({"jobId":"RESOURCEGROUPDELETIONJOB-<GROUP>|<operation>","jobLocation":"<location>"}).
std::string deletion_token(const Operation& op, const std::string& group) {
    nlohmann::json job{{"jobId", "RESOURCEGROUPDELETIONJOB-" + upper(group) + "|" + op.id}, {"jobLocation", op.location}};
    std::string token = crypto::base64_encode(job.dump());
    for (char& c : token) c = c == '+' ? '-' : c == '/' ? '_' : c;
    while (!token.empty() && token.back() == '=') token.pop_back();
    return token;
}

// The operation id in a deletion token; nullopt for a token this emulator did not issue.
std::optional<std::string> operation_of_token(std::string token) {
    for (char& c : token) c = c == '-' ? '+' : c == '_' ? '/' : c;
    while (token.size() % 4) token += '=';
    std::optional<std::string> text = crypto::base64_decode(token);
    if (!text) return std::nullopt;
    nlohmann::json job = nlohmann::json::parse(*text, nullptr, false);
    if (!job.is_object() || !job.contains("jobId") || !job["jobId"].is_string()) return std::nullopt;
    const std::string id = job["jobId"];
    size_t bar = id.rfind('|');
    if (bar == std::string::npos || id.rfind("RESOURCEGROUPDELETIONJOB-", 0) != 0) return std::nullopt;
    return id.substr(bar + 1);
}

void delete_group(ArmContext& ctx, const ArmRequest& req, const Params& p, httplib::Response& res) {
    StoredResource group = require_group(ctx, p);
    ctx.store.update(group.key, [](nlohmann::json& g) {
        g["properties"]["provisioningState"] = "Deleting";
        return true;
    });
    Operation op;
    op.kind = "delete";
    op.resource_id = group.body["id"];
    op.provider = "Microsoft.Resources";
    op.subscription = p["subscriptionId"];
    op.location = group.body["location"];
    op.api_version = req.api_version();
    op = ctx.operations.begin(op);
    res.status = 202;
    res.set_header("Location", req.base_url + "/subscriptions/" + p["subscriptionId"] + "/operationresults/" +
                                   deletion_token(op, p["resourceGroupName"]) + "?api-version=" + op.api_version);
    OperationTracker::ask_back(res);
}

// GET of a deletion's Location: 202 while the group goes, then 200 with no body.
void poll_deletion(ArmContext& ctx, const ArmRequest& req, const Params& p, httplib::Response& res) {
    std::optional<std::string> id = operation_of_token(p["operationToken"]);
    std::optional<Operation> op = id ? ctx.operations.get(*id) : std::nullopt;
    if (!op || !iequals(op->subscription, p["subscriptionId"]) || op->provider != "Microsoft.Resources" ||
        op->kind != "delete") {
        throw CloudError(404, "OperationNotFound", "The operation " + p["operationToken"] + " is not found");
    }
    if (op->status == "InProgress") {
        res.status = 202;
        res.set_header("Location", req.base_url + req.http.path + "?api-version=" + req.api_version());
        OperationTracker::ask_back(res);
        return;
    }
    if (op->status == "Failed") return send_json(res, 400, {{"error", op->error}});
    res.status = 200;
}

}  // namespace

namespace {

// $filter of a group list: `tagName eq 'N'`, with `and tagValue eq 'V'` (what `az group list
// --tag` sends): a group matches when one of its tags does.
DocumentFilter tag_filter(const ArmRequest& req) {
    std::optional<std::string> text = req.query("$filter");
    if (!text || text->empty()) return {};
    try {
        return parse_odata_filter(*text);
    } catch (const FilterError& e) {
        throw bad_request("InvalidFilterInQueryString", std::string("Invalid $filter '") + *text + "': " + e.what(),
                          "$filter");
    }
}

bool has_matching_tag(const nlohmann::json& group, const DocumentFilter& filter) {
    if (!group.contains("tags") || !group["tags"].is_object() || group["tags"].empty()) return filter(group);
    for (const auto& [name, value] : group["tags"].items()) {
        // ARM reads the names without regard to case: az sends tagname and tagvalue.
        nlohmann::json one = group;
        one["tagName"] = one["tagname"] = name;
        one["tagValue"] = one["tagvalue"] = value;
        if (filter(one)) return true;
    }
    return false;
}

}  // namespace

void remember_subscription(ArmContext& ctx, const std::string& id) {
    if (ctx.store.type_of(id)) return;
    ctx.store.create(id, "", kind::kSubscription, {{"id", id}, {"subscriptionId", id.substr(id.rfind('/') + 1)}});
}

void remember_subscriptions(ArmContext& ctx) {
    for (const StoredResource& group : ctx.store.all_of_type(kind::kResourceGroup)) {
        const std::string id = group.body.value("id", "");
        const std::string prefix = "/subscriptions/";
        size_t end = id.find('/', prefix.size());
        if (id.rfind(prefix, 0) == 0 && end != std::string::npos) remember_subscription(ctx, id.substr(0, end));
    }
}

void add_resource_group_routes(Router& router, ArmContext& ctx) {
    router.add("PUT", kGroupPath, Versions::any_dated, "Microsoft.Resources/subscriptions/resourceGroups/write",
               [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) { put_group(ctx, req, p, res); });
    router.add("PATCH", kGroupPath, Versions::any_dated, "Microsoft.Resources/subscriptions/resourceGroups/write",
               [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) { patch_group(ctx, req, p, res); });
    router.add("GET", kGroupPath, Versions::any_dated, "Microsoft.Resources/subscriptions/resourceGroups/read",
               [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) {
                   StoredResource g = require_group(ctx, p);
                   send_resource(res, g, group_view(g.body, req));
               });
    router.add("HEAD", kGroupPath, Versions::any_dated, "Microsoft.Resources/subscriptions/resourceGroups/read",
               [&ctx](const ArmRequest&, const Params& p, httplib::Response& res) {
                   res.status = ctx.store.get(group_id(p)) ? 204 : 404;
               });
    router.add("DELETE", kGroupPath, Versions::any_dated, "Microsoft.Resources/subscriptions/resourceGroups/delete",
               [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) { delete_group(ctx, req, p, res); });
    router.add("GET", "/subscriptions/{subscriptionId}/operationresults/{operationToken}", Versions::any_dated,
               "Microsoft.Resources/subscriptions/operationresults/read",
               [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) { poll_deletion(ctx, req, p, res); });
    router.add("GET", "/subscriptions/{subscriptionId}/resourcegroups", Versions::any_dated,
               "Microsoft.Resources/subscriptions/resourceGroups/read",
               [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) {
                   const DocumentFilter filter = tag_filter(req);
                   Page page = ctx.store.children(subscription_id(p), kind::kResourceGroup, skip_token(req), 1000);
                   nlohmann::json items = nlohmann::json::array();
                   for (const StoredResource& g : page.items) {
                       nlohmann::json view = group_view(g.body, req);
                       if (!filter || has_matching_tag(view, filter)) items.push_back(std::move(view));
                   }
                   send_page(res, req, items, page.next_after);
               });
}

}  // namespace bai::arm
