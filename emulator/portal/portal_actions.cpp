#include "emulator/portal/portal_actions.h"

#include <stdexcept>

#include "common/text/ascii.h"
#include "emulator/portal/portal_guard.h"
#include "emulator/portal/portal_json.h"

namespace bai::portal {
namespace {

using nlohmann::json;

// The api-version an id's resource is served by: the flat preview's ids have no workspace.
std::string api_version_of(const std::string& id) {
    return text::lower(id).find("/providers/microsoft.batchai/workspaces/") != std::string::npos ? "2018-05-01"
                                                                                                : "2017-09-01-preview";
}

bool is_batchai(const std::string& id, const std::string& collection) {
    const std::string lower = text::lower(id);
    return lower.rfind("/subscriptions/", 0) == 0 && lower.find("/providers/microsoft.batchai/") != std::string::npos &&
           lower.find("/" + collection + "/") != std::string::npos && id.find('?') == std::string::npos &&
           id.find('#') == std::string::npos && id.size() <= 2048;
}

// An ARM request answered by the ARM routes in this process.
json arm_call(const http::Routes& arm, const std::string& method, const std::string& path, const json& body,
              int& status) {
    httplib::Request req;
    req.method = method;
    req.path = path;
    const std::string version = api_version_of(path);
    req.target = path + "?api-version=" + version;
    req.params.emplace("api-version", version);
    req.set_header("Authorization", "Bearer portal");
    if (!body.is_null()) {
        req.body = body.dump();
        req.set_header("Content-Type", "application/json");
    }
    httplib::Response res;
    arm.dispatch(req, res);
    status = res.status < 0 ? 200 : res.status;
    json answer = json::parse(res.body, nullptr, false);
    return answer.is_discarded() ? json() : answer;
}

void act(const PortalActions& a, const httplib::Request& req, httplib::Response& res) {
    if (!change_allowed(req, res, a.token)) return;
    json body = json::parse(req.body, nullptr, false);
    if (!body.is_object()) return send_portal_error(res, 400, "InvalidBody", "The body must be a JSON object with an action.");
    // (A field of another type reads as absent: json::value would throw on it.)
    auto text_field = [&body](const char* name) {
        auto it = body.find(name);
        return it != body.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    const std::string action = text_field("action");
    const std::string id = text_field("id");
    int status = 0;
    json answer;
    if (action == "terminate" || action == "delete-job") {
        if (!is_batchai(id, "jobs")) return send_portal_error(res, 400, "InvalidParameter", "The field id must be a job's ARM id.");
        answer = action == "terminate" ? arm_call(a.arm, "POST", id + "/terminate", json(), status)
                                       : arm_call(a.arm, "DELETE", id, json(), status);
    } else if (action == "resize" || action == "delete-cluster") {
        if (!is_batchai(id, "clusters")) return send_portal_error(res, 400, "InvalidParameter", "The field id must be a cluster's ARM id.");
        if (action == "delete-cluster") {
            answer = arm_call(a.arm, "DELETE", id, json(), status);
        } else {
            const json& nodes = body.contains("nodes") ? body["nodes"] : json();
            if (!nodes.is_number_integer() || nodes.get<long long>() < 0 || nodes.get<long long>() > 1000) {
                return send_portal_error(res, 400, "InvalidParameter", "The field nodes must be a whole number from 0 to 1000.");
            }
            answer = arm_call(a.arm, "PATCH", id,
                              json{{"properties", {{"scaleSettings", {{"manual", {{"targetNodeCount", nodes}}}}}}}}, status);
        }
    } else if (action == "preempt" || action == "fail-node") {
        const json& node = body.contains("node") ? body["node"] : json();
        if (!node.is_string() || node.get<std::string>().empty() || node.get<std::string>().size() > 256) {
            return send_portal_error(res, 400, "InvalidParameter", "The field node must be a node's id.");
        }
        try {
            std::optional<json> done = action == "preempt" ? a.preempt(node.get<std::string>()) : a.fail(node.get<std::string>());
            if (!done) return send_portal_error(res, 404, "NodeNotFound", "There is no node " + node.get<std::string>() + ".");
            return send_json(res, 200, json{{"status", 200}, {"answer", *done}});
        } catch (const std::invalid_argument& e) {
            return send_portal_error(res, 400, "NodeNotLowPriority", e.what());
        }
    } else {
        return send_portal_error(res, 400, "InvalidParameter",
                      "The field action must be terminate, delete-job, resize, delete-cluster, preempt or fail-node.");
    }
    // What ARM answered, as it answered it (202 for an operation under way, its error otherwise).
    send_json(res, status >= 400 ? status : 200, json{{"status", status}, {"answer", answer}});
}

}  // namespace

void add_action_routes(http::Routes& routes, const PortalActions& actions) {
    routes.Get("/portal/api/session", [token = actions.token](const httplib::Request&, httplib::Response& res) {
        send_json(res, 200, json{{"token", token}});
    });
    routes.Post("/portal/api/actions", [actions](const httplib::Request& req, httplib::Response& res) { act(actions, req, res); });
}

}  // namespace bai::portal
