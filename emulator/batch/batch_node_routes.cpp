// The Batch API's compute nodes: list, get, reboot, reimage, remove (the pool's removenodes),
// scheduling disabled and enabled, their files (list, get, properties, delete), their user
// accounts (add, update, delete), remote login settings and RDP file, and the
// emulator's own pre-emption of a low-priority node.
#include <algorithm>

#include "common/text/ascii.h"
#include "common/time/timestamps.h"
#include "emulator/batch/batch_api.h"
#include "emulator/batch/batch_error.h"
#include "emulator/batch/body_properties.h"
#include "emulator/batch/batch_http.h"
#include "emulator/batch/node_endpoints.h"
#include "emulator/batch/node_files.h"
#include "emulator/batch/odata_query.h"
#include "emulator/batch/pool_rules.h"
#include "emulator/validation/duration.h"

namespace bai::batch {

using nlohmann::json;

namespace {

BatchError node_not_found() { return BatchError(404, "NodeNotFound", "The specified node does not exist."); }

// The body of a POST that may have none.
json optional_body(const httplib::Request& req) { return req.body.empty() ? json::object() : parse_body(req); }

}  // namespace

void BatchApi::serve_nodes(http::Routes& server) {
    route(server, "GET", R"(/pools/([^/]+)/nodes)", [this](auto& a, auto& q, auto& r) { list_nodes(a, q, r); });
    route(server, "GET", R"(/pools/([^/]+)/nodes/([^/]+))", [this](auto& a, auto& q, auto& r) { get_node(a, q, r); });
    route(server, "POST", R"(/pools/([^/]+)/nodes/([^/]+)/(reboot|reimage))", [this](auto& a, auto& q, auto& r) { reboot_node(a, q, r); });
    route(server, "POST", R"(/pools/([^/]+)/nodes/([^/]+)/(disablescheduling|enablescheduling))",
          [this](auto& a, auto& q, auto& r) { set_node_scheduling(a, q, r); });
    route(server, "POST", R"(/pools/([^/]+)/removenodes)", [this](auto& a, auto& q, auto& r) { remove_nodes(a, q, r); });
    route(server, "GET", R"(/pools/([^/]+)/nodes/([^/]+)/files)", [this](auto& a, auto& q, auto& r) { list_node_files(a, q, r); });
    // httplib hands HEAD (the SDK's get_properties_from_compute_node) to the GET route.
    route(server, "GET", R"(/pools/([^/]+)/nodes/([^/]+)/files/(.+))", [this](auto& a, auto& q, auto& r) { get_node_file(a, q, r); });
    route(server, "DELETE", R"(/pools/([^/]+)/nodes/([^/]+)/files/(.+))",
          [this](auto& a, auto& q, auto& r) { delete_node_file(a, q, r); });
    route(server, "POST", R"(/pools/([^/]+)/nodes/([^/]+)/users)", [this](auto& a, auto& q, auto& r) { add_node_user(a, q, r); });
    route(server, "PUT", R"(/pools/([^/]+)/nodes/([^/]+)/users/([^/]+))", [this](auto& a, auto& q, auto& r) { update_node_user(a, q, r); });
    route(server, "DELETE", R"(/pools/([^/]+)/nodes/([^/]+)/users/([^/]+))", [this](auto& a, auto& q, auto& r) { delete_node_user(a, q, r); });
    route(server, "POST", R"(/pools/([^/]+)/nodes/([^/]+)/uploadbatchservicelogs)",
          [this](auto& a, auto& q, auto& r) { upload_node_logs(a, q, r); });
    route(server, "GET", R"(/pools/([^/]+)/nodes/([^/]+)/extensions(?:/([^/]+))?)",
          [this](auto& a, auto& q, auto& r) { node_extensions(a, q, r); });
    route(server, "GET", R"(/pools/([^/]+)/nodes/([^/]+)/(rdp|remoteloginsettings))", [this](auto& a, auto& q, auto& r) { remote_login(a, q, r); });
    // The emulator's own: what only the cloud does to a low-priority node.
    route(server, "POST", R"(/emulator/pools/([^/]+)/nodes/([^/]+)/preempt)",
          [this](auto& a, auto& q, auto& r) { preempt_node(a, q, r); }, false);
}

void BatchApi::list_nodes(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    const std::string pool_id = req.matches[1];
    need_pool(account, pool_id);
    json nodes = nodes_.nodes(account.name, pool_id);
    // By id, as the service lists them (its recordings list a pool's nodes so, not as they joined).
    std::sort(nodes.begin(), nodes.end(), [](const json& a, const json& b) { return a.value("id", "") < b.value("id", ""); });
    const std::optional<odata::Filter> filter = filter_of(req);
    const std::optional<std::vector<std::string>> fields = select_of(req);
    json shown = json::array();
    for (json& node : nodes) {
        node["url"] = base_url(req) + "/pools/" + pool_id + "/nodes/" + node.value("id", "");
        if (filter && !filter->matches(node)) continue;
        shown.push_back(fields ? select_fields(node, *fields) : std::move(node));
    }
    json body{{"odata.metadata", base_url(req) + "/$metadata#nodes"}, {"value", shown}};
    res.set_content(body.dump(), "application/json;odata=minimalmetadata");
}

void BatchApi::get_node(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    const std::string pool_id = req.matches[1], node_id = req.matches[2];
    need_pool(account, pool_id);
    for (json node : nodes_.nodes(account.name, pool_id)) {
        if (node.value("id", "") != node_id) continue;
        node["url"] = base_url(req) + "/pools/" + pool_id + "/nodes/" + node_id;
        if (std::optional<std::vector<std::string>> fields = select_of(req)) node = select_fields(node, *fields);
        node["odata.metadata"] = base_url(req) + "/$metadata#nodes/@Element";
        return res.set_content(node.dump(), "application/json;odata=minimalmetadata");
    }
    throw node_not_found();
}

void BatchApi::reboot_node(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    const std::string pool_id = req.matches[1], node_id = req.matches[2], action = req.matches[3];
    const StoredEntity pool = need_pool(account, pool_id);
    const bool reimage = action == "reimage";
    // As the service answers (its recordings): a node of a virtual machine pool is not reimaged.
    if (reimage && !pool.body.contains("cloudServiceConfiguration")) {
        throw BatchError(409, "OperationNotValidOnNode", "The specified operation is not valid on the node.",
                         {{"Reason", "Operation reimage can be invoked only on pools created with cloudServiceConfiguration"}});
    }
    const std::string option = option_of(optional_body(req), reimage ? "nodeReimageOption" : "nodeRebootOption",
                                         {"requeue", "terminate", "taskcompletion", "retaineddata"});
    if (!nodes_.reboot(account.name, pool_id, node_id, option, reimage)) throw node_not_found();
    res.status = 202;
}

void BatchApi::set_node_scheduling(const BatchAccount& account, const httplib::Request& req, httplib::Response&) {
    const std::string pool_id = req.matches[1], node_id = req.matches[2];
    need_pool(account, pool_id);
    const bool enable = req.matches[3] == "enablescheduling";
    const std::string option =
        enable ? "" : option_of(optional_body(req), "nodeDisableSchedulingOption", {"requeue", "terminate", "taskcompletion"});
    if (!nodes_.set_scheduling(account.name, pool_id, node_id, enable, option)) throw node_not_found();
}

void BatchApi::remove_nodes(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    const std::string pool_id = req.matches[1];
    StoredEntity pool = need_pool(account, pool_id);
    check_conditions(req, pool);
    json body = parse_body(req);
    if (!body.contains("nodeList")) throw missing_property("nodeList");
    refuse_unknown_properties(body, "NodeRemoveParameter");
    const json& list = body["nodeList"];
    if (!list.is_array() || list.empty() || list.size() > 100) {
        throw invalid_property("nodeList", list.dump(), "The value is a list of 1 to 100 node ids");
    }
    std::vector<std::string> ids;
    for (const json& id : list) {
        if (!id.is_string()) throw invalid_property("nodeList", id.dump(), "Each node id is a string");
        ids.push_back(id.get<std::string>());
    }
    if (body.contains("resizeTimeout") && (!body["resizeTimeout"].is_string() ||
                                           !validation::parse_duration(body["resizeTimeout"].get<std::string>()))) {
        throw invalid_property("resizeTimeout", body["resizeTimeout"].dump(), "The value is an ISO 8601 duration");
    }
    if (pool.body.value("state", "") != "active") throw BatchError(409, "PoolBeingDeleted", "The specified pool is being deleted.");
    nodes_.remove_nodes(account.name, pool_id, ids,
                        option_of(body, "nodeDeallocationOption", {"requeue", "terminate", "taskcompletion", "retaineddata"}));
    // The pool's headers, as for a resize: removing nodes changes its targets.
    if (std::optional<StoredEntity> now = store_.get(account.name, kPools, pool_id)) set_entity_headers(res, *now);
    res.status = 202;
}

void BatchApi::preempt_node(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    need_pool(account, req.matches[1]);
    json body = optional_body(req);
    std::chrono::seconds recover_after{0};
    if (body.contains("recoverAfter")) {
        std::optional<std::chrono::seconds> d =
            body["recoverAfter"].is_string() ? validation::parse_duration(body["recoverAfter"].get<std::string>()) : std::nullopt;
        if (!d) throw invalid_property("recoverAfter", body["recoverAfter"].dump(), "The value is an ISO 8601 duration");
        recover_after = *d;
    }
    std::optional<json> done = nodes_.preempt(account.name, req.matches[1], req.matches[2], recover_after);
    if (!done) throw node_not_found();
    res.set_content(done->dump(), "application/json");
}

namespace {

// A user account's properties as the service checks them (`adding`: name too); a Windows node's
// account has a password and no SSH key.
void check_node_user(const json& body, bool adding, bool windows) {
    if (!body.is_object()) throw BatchError(400, "InvalidRequestBody", "The specified Request Body is not syntactically valid.");
    if (adding) {
        if (!body.contains("name")) throw missing_property("name");
        if (!body["name"].is_string() || body["name"].get<std::string>().empty() || body["name"].get<std::string>().size() > 32 ||
            body["name"].get<std::string>().find_first_of("/\\:\"[]|<>+=;,?*@ \t\n") != std::string::npos ||
            body["name"].get<std::string>().find("..") != std::string::npos) {
            throw invalid_property("name", body["name"].dump(), "A user name has 1 to 32 characters, none of /\\:\"[]|<>+=;,?*@ or spaces");
        }
        if (body.contains("isAdmin") && !body["isAdmin"].is_boolean()) {
            throw invalid_property("isAdmin", body["isAdmin"].dump(), "The value must be true or false");
        }
    }
    for (const char* text : {"password", "sshPublicKey"}) {
        if (body.contains(text) && !body[text].is_string()) throw invalid_property(text, body[text].dump(), "The value must be a string");
    }
    if (body.contains("expiryTime") && (!body["expiryTime"].is_string() || !time::parse_iso8601(body["expiryTime"].get<std::string>()))) {
        throw invalid_property("expiryTime", body["expiryTime"].dump(), "The value is a date and time such as 2030-01-01T00:00:00Z");
    }
    if (windows && body.contains("sshPublicKey")) {
        throw invalid_property("sshPublicKey", body["sshPublicKey"].dump(), "An SSH public key is for Linux nodes only");
    }
    if (windows && !body.contains("password")) throw missing_property("password");
}

}  // namespace

void BatchApi::add_node_user(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    const std::string pool_id = req.matches[1], node_id = req.matches[2];
    StoredEntity pool = need_pool(account, pool_id);
    json body = parse_body(req);
    check_node_user(body, true, is_windows_pool(pool.body));
    refuse_unknown_properties(body, "ComputeNodeUser");
    json user = body;
    if (!user.contains("isAdmin")) user["isAdmin"] = false;
    if (!user.contains("expiryTime")) user["expiryTime"] = time::format_iso8601(time::now() + std::chrono::hours(24));
    nodes_.add_user(account.name, pool_id, node_id, user);
    const std::string url = base_url(req) + "/pools/" + pool_id + "/nodes/" + node_id + "/users/" + body["name"].get<std::string>();
    res.set_header("Location", url);
    res.set_header("DataServiceId", url);
    res.status = 201;
}

void BatchApi::update_node_user(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    const std::string pool_id = req.matches[1], node_id = req.matches[2], name = req.matches[3];
    StoredEntity pool = need_pool(account, pool_id);
    json body = parse_body(req);
    check_node_user(body, false, is_windows_pool(pool.body));
    refuse_unknown_properties(body, "NodeUpdateUserParameter");
    nodes_.update_user(account.name, pool_id, node_id, name, body);
    res.set_header("DataServiceId", base_url(req) + "/pools/" + pool_id + "/nodes/" + node_id + "/users/" + name);
}

void BatchApi::delete_node_user(const BatchAccount& account, const httplib::Request& req, httplib::Response&) {
    const std::string pool_id = req.matches[1], node_id = req.matches[2];
    need_pool(account, pool_id);
    nodes_.delete_user(account.name, pool_id, node_id, req.matches[3]);
}

// The RDP file of a Windows node, or the address and port of a node's SSH (or RDP); each is
// refused (409 OperationNotValidOnNode, a choice) where the service offers the other.
void BatchApi::remote_login(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    const std::string pool_id = req.matches[1], node_id = req.matches[2];
    StoredEntity pool = need_pool(account, pool_id);
    std::optional<int> number = nodes_.node_number(account.name, pool_id, node_id);
    if (!number) throw node_not_found();
    if (std::string(req.matches[3]) == "rdp") {
        std::optional<std::string> file = rdp_file(pool.body, *number);
        if (!file) throw BatchError(409, "OperationNotValidOnNode", "An RDP file is for Windows nodes: log in to a Linux node with its remote login settings.");
        return res.set_content(*file, "application/octet-stream");
    }
    std::optional<json> settings = remote_login_settings(pool.body, *number);
    if (!settings) {
        throw BatchError(409, "OperationNotValidOnNode", "A node of a cloudServiceConfiguration pool is reached through its RDP file.");
    }
    (*settings)["odata.metadata"] = base_url(req) + "/$metadata#Microsoft.Azure.Batch.Protocol.Entities.ComputeNodeGetRemoteLoginSettingsResult";
    res.set_content(settings->dump(), "application/json;odata=minimalmetadata");
}

// The pool's virtual machine extensions on a node, as provisioned (the emulator runs none of them:
// each shows Succeeded); one by name (404 NodeExtensionNotFound, a name chosen here).
void BatchApi::node_extensions(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    const std::string pool_id = req.matches[1], node_id = req.matches[2], name = req.matches[3];
    StoredEntity pool = need_pool(account, pool_id);
    if (!nodes_.node_root(account.name, pool_id, node_id)) throw node_not_found();
    const json extensions = pool.body.value("virtualMachineConfiguration", json::object()).value("extensions", json::array());
    json items = json::array();
    for (const json& extension : extensions.is_array() ? extensions : json::array()) {
        if (!extension.is_object()) continue;
        const std::string ext_name = extension.value("name", "");
        json status{{"code", "ProvisioningState/succeeded"}, {"displayStatus", "Provisioning succeeded"}, {"level", "Info"},
                     {"time", time::format_iso8601(time::now())}};
        items.push_back({{"provisioningState", "Succeeded"}, {"vmExtension", extension},
                         {"instanceView", {{"name", ext_name}, {"statuses", json::array({status})}}}});
        if (!name.empty() && ext_name == name) {
            json one = items.back();
            one["odata.metadata"] = base_url(req) + "/$metadata#extensions/@Element";
            return res.set_content(one.dump(), "application/json;odata=minimalmetadata");
        }
    }
    if (!name.empty()) throw BatchError(404, "NodeExtensionNotFound", "The specified extension does not exist on the node.");
    send_computed_list(req, res, items, base_url(req) + "/$metadata#extensions");
}

std::filesystem::path BatchApi::need_node_root(const BatchAccount& account, const std::string& pool_id, const std::string& node_id) const {
    need_pool(account, pool_id);
    std::optional<std::filesystem::path> root = nodes_.node_root(account.name, pool_id, node_id);
    if (!root) throw node_not_found();
    return *root;
}

void BatchApi::list_node_files(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    const std::string pool_id = req.matches[1], node_id = req.matches[2];
    send_file_list(req, res, need_node_root(account, pool_id, node_id), base_url(req) + "/pools/" + pool_id + "/nodes/" + node_id + "/files",
                   base_url(req) + "/$metadata#files");
}

// A file of the node's directory (startup/stdout.txt, shared/...), as the SDK's
// file.get_from_compute_node reads it.
void BatchApi::get_node_file(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    const std::string pool_id = req.matches[1], node_id = req.matches[2], path = req.matches[3];
    send_file_under(req, res, need_node_root(account, pool_id, node_id), path,
                    base_url(req) + "/pools/" + pool_id + "/nodes/" + node_id + "/files/" + path);
}

void BatchApi::delete_node_file(const BatchAccount& account, const httplib::Request& req, httplib::Response&) {
    delete_file_under(req, need_node_root(account, req.matches[1], req.matches[2]), req.matches[3]);
}

}  // namespace bai::batch
