#include "tools/bai/arm_client.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "common/text/percent_encoding.h"
#include "tools/bai/cli_error.h"
#include "tools/bai/http_client.h"
#include "tools/bai/json_fields.h"

namespace bai::cli {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

std::string with_query(const std::string& path, const Query& query) {
    std::string out = path;
    char separator = path.find('?') == std::string::npos ? '?' : '&';
    for (const auto& [name, value] : query) {
        out.append(1, separator).append(text::percent_encode(name)).append("=").append(text::percent_encode(value));
        separator = '&';
    }
    return out;
}

// httplib::Headers compares names without case.
std::string header(const httplib::Headers& headers, const std::string& name) {
    auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
}

std::string cloud_error_text(const json& body) {
    const json* error = body.is_object() && body.contains("error") ? &body["error"] : &body;
    if (!error->is_object()) return "";
    std::string code = string_field(*error, "code");
    std::string message = string_field(*error, "message");
    std::string out = code.empty() ? message : "(" + code + ") " + message;
    if (error->contains("details") && (*error)["details"].is_array()) {
        for (const json& d : (*error)["details"]) {
            if (d.is_object()) out += "\n  " + string_field(d, "target") + ": " + string_field(d, "message");
        }
    }
    return out;
}

}  // namespace

ArmClient::ArmClient(endpoints::Endpoints endpoints, std::string subscription)
    : endpoints_(std::move(endpoints)), subscription_(std::move(subscription)) {
    try {
        http_ = make_client(endpoints_.arm, endpoints_.ca_cert, 30s);
    } catch (const std::invalid_argument& e) {
        throw CliError(std::string("cannot use the emulator's ARM endpoint: ") + e.what());
    }
}

ArmClient::Response ArmClient::send(const std::string& method, const std::string& path,
                                    const std::string& api_version, const Query& query,
                                    const std::optional<json>& body) {
    Query full = query;
    if (!api_version.empty()) full.insert(full.begin(), {"api-version", api_version});
    std::string target = with_query(path, full);
    httplib::Headers headers = {{"Authorization", "Bearer bai-cli"}, {"Accept", "application/json"},
                                {"User-Agent", "bai-cli"}};
    std::string payload = body ? body->dump() : "";
    httplib::Result result = method == "GET"     ? http_->Get(target, headers)
                             : method == "PUT"   ? http_->Put(target, headers, payload, "application/json")
                             : method == "PATCH" ? http_->Patch(target, headers, payload, "application/json")
                             : method == "POST"  ? http_->Post(target, headers, payload, "application/json")
                                                 : http_->Delete(target, headers);
    if (!result) {
        throw CliError("cannot reach the emulator at " + endpoints_.arm + ": " + httplib::to_string(result.error()) +
                       " (is it running? see `bai status`)");
    }
    Response response;
    response.status = result->status;
    response.headers = result->headers;
    if (!result->body.empty()) {
        response.body = json::parse(result->body, nullptr, false);
        if (response.body.is_discarded()) response.body = json(result->body);
    }
    return response;
}

void ArmClient::fail(const Response& response, const std::string& what) const {
    std::string text = cloud_error_text(response.body);
    if (text.empty()) text = "HTTP " + std::to_string(response.status) + " from " + what;
    throw CliError(text, response.status == 404 ? kExitNotFound : 1);
}

std::string ArmClient::path_of(const std::string& url) const {
    if (url.rfind(endpoints_.arm, 0) == 0) return url.substr(endpoints_.arm.size());
    size_t scheme = url.find("://");
    if (scheme == std::string::npos) return url;
    size_t slash = url.find('/', scheme + 3);
    return slash == std::string::npos ? "/" : url.substr(slash);
}

json ArmClient::get(const std::string& path, const std::string& api_version) {
    Response r = send("GET", path, api_version);
    if (r.status / 100 != 2) fail(r, "GET " + path);
    return r.body;
}

json ArmClient::post(const std::string& path, const std::string& api_version, const Query& query,
                     const std::optional<json>& body) {
    Response r = send("POST", path, api_version, query, body);
    if (r.status / 100 != 2) fail(r, "POST " + path);
    return r.body;
}

json ArmClient::patch(const std::string& path, const std::string& api_version, const json& body) {
    Response r = send("PATCH", path, api_version, {}, body);
    if (r.status / 100 != 2) fail(r, "PATCH " + path);
    return r.body;
}

json ArmClient::list(const std::string& path, const std::string& api_version, const Query& query,
                     const std::string& method) {
    json items = json::array();
    Response r = send(method, path, api_version, query);
    while (true) {
        if (r.status / 100 != 2) fail(r, "GET " + path);
        if (r.body.is_object() && r.body.contains("value") && r.body["value"].is_array()) {
            for (json& item : r.body["value"]) items.push_back(std::move(item));
        }
        std::string next = string_field(r.body, "nextLink");
        if (next.empty()) break;
        r = send("GET", path_of(next), "");
    }
    return items;
}

// Polls quickly at first (the emulator's operations are short), never slower than Retry-After.
void ArmClient::follow_operation(const Response& accepted, const std::string& what) {
    std::string url = header(accepted.headers, "Azure-AsyncOperation");
    if (url.empty()) url = header(accepted.headers, "Location");
    if (url.empty()) return;
    auto ceiling = 1000ms;
    std::string retry = header(accepted.headers, "Retry-After");
    if (!retry.empty() && std::all_of(retry.begin(), retry.end(), ::isdigit)) {
        ceiling = std::chrono::milliseconds(std::stoll(retry) * 1000);
    }
    ceiling = std::max(ceiling, 25ms);
    auto interval = 25ms;
    while (true) {
        std::this_thread::sleep_for(interval);
        interval = std::min(interval * 2, ceiling);
        Response r = send("GET", path_of(url), "");
        if (r.status == 202) continue;  // a Location poll: still running
        if (r.status / 100 != 2) fail(r, what);
        if (!r.body.is_object() || !r.body.contains("status")) return;
        std::string status = string_field(r.body, "status");
        if (status == "InProgress") continue;
        if (status == "Succeeded") return;
        std::string text = cloud_error_text(r.body);
        throw CliError(text.empty() ? what + " ended " + status : text);
    }
}

json ArmClient::create(const std::string& path, const std::string& api_version, const json& body, bool no_wait) {
    Response r = send("PUT", path, api_version, {}, body);
    if (r.status / 100 != 2) fail(r, "PUT " + path);
    if (no_wait) return nullptr;
    if (r.status == 202) {
        follow_operation(r, "creating " + path);
        return get(path, api_version);
    }
    return r.body;
}

bool ArmClient::delete_resource(const std::string& path, const std::string& api_version, bool no_wait) {
    Response r = send("DELETE", path, api_version);
    if (r.status / 100 != 2) fail(r, "DELETE " + path);
    if (r.status == 204) return false;
    if (r.status == 202 && !no_wait) follow_operation(r, "deleting " + path);
    return true;
}

void ArmClient::post_action(const std::string& path, const std::string& api_version, bool no_wait) {
    Response r = send("POST", path, api_version);
    if (r.status / 100 != 2) fail(r, "POST " + path);
    if (r.status == 202 && !no_wait) follow_operation(r, "POST " + path);
}

std::string group_path(const ArmClient& arm, const std::string& group) {
    return "/subscriptions/" + text::percent_encode(arm.subscription()) + "/resourceGroups/" +
           text::percent_encode(group);
}

std::string batchai_path(const ArmClient& arm, const std::string& group) {
    return group_path(arm, group) + "/providers/Microsoft.BatchAI";
}

}  // namespace bai::cli
