#include "emulator/arm/resource_view.h"

#include <charconv>

#include "emulator/arm/cloud_error.h"
#include "common/text/percent_encoding.h"
#include "emulator/arm/text.h"

namespace bai::arm {
namespace {

void redact_in_place(nlohmann::json& value, bool in_secrets) {
    if (value.is_array()) {
        for (auto& item : value) redact_in_place(item, in_secrets);
        return;
    }
    if (!value.is_object()) return;
    for (const char* secret : {"accountKey", "adminUserPassword", "password", "instrumentationKey"}) {
        value.erase(secret);
    }
    if (in_secrets) value.erase("value");
    for (auto it = value.begin(); it != value.end(); ++it) {
        redact_in_place(it.value(), it.key() == "secrets");
    }
}

}  // namespace

void send_json(httplib::Response& res, int status, const nlohmann::json& body) {
    res.status = status;
    // Error messages may quote bytes of a malformed body that are not UTF-8.
    res.set_content(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                    "application/json; charset=utf-8");
}

void send_resource(httplib::Response& res, const StoredResource& stored, const nlohmann::json& view, int status) {
    res.set_header("ETag", stored.etag);
    res.set_header("Last-Modified", time::format_rfc1123(time::from_ticks(stored.modified_ticks)));
    send_json(res, status, view);
}

std::int64_t skip_token(const ArmRequest& request) {
    std::optional<std::string> token = request.query("$skiptoken");
    if (!token) return 0;
    std::int64_t value = 0;
    auto [end, ec] = std::from_chars(token->data(), token->data() + token->size(), value);
    if (ec != std::errc() || end != token->data() + token->size() || value < 0) {
        throw bad_request("InvalidQueryParameterValue", "$skiptoken '" + *token + "' is not one this service issued",
                          "$skiptoken");
    }
    return value;
}

void send_page(httplib::Response& res, const ArmRequest& request, const nlohmann::json& items,
               const std::optional<std::int64_t>& next_after) {
    nlohmann::json body{{"value", items}};
    if (next_after) {
        std::string link = request.base_url + request.http.path + "?";
        for (const auto& [name, value] : request.http.params) {
            if (iequals(name, "$skiptoken")) continue;
            link += text::percent_encode(name) + "=" + text::percent_encode(value) + "&";
        }
        link += "%24skiptoken=" + std::to_string(*next_after);
        body["nextLink"] = link;
    }
    send_json(res, 200, body);
}

nlohmann::json redacted(const nlohmann::json& body) {
    nlohmann::json copy = body;
    if (copy.is_object()) {
        for (auto it = copy.begin(); it != copy.end();) {
            if (!it.key().empty() && it.key()[0] == '_') {
                it = copy.erase(it);
            } else {
                ++it;
            }
        }
    }
    redact_in_place(copy, false);
    return copy;
}

nlohmann::json redacted_view(const StoredResource& stored) { return redacted(stored.body); }

std::string arm_time(time::TimePoint t) { return time::format_iso8601(t, 3); }

}  // namespace bai::arm
