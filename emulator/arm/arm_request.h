// What every ARM handler reads from a request: the decoded path segments, the api-version, the
// query parameters (names compared case-insensitively, as ARM does), the JSON body, and the
// base URL the client used (for nextLink and the operation URLs).
#pragma once

#include <httplib.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bai::arm {

// Bodies above this size are refused (ARM's own limit is 4 MiB).
inline constexpr size_t kMaxBodyBytes = 4 * 1024 * 1024;
// Deeper JSON nesting than any Batch AI body needs is refused before parsing.
inline constexpr int kMaxJsonDepth = 64;

struct ArmRequest {
    const httplib::Request& http;
    std::vector<std::string> segments;
    std::string base_url;  // "https://127.0.0.1:10443"

    const std::string& method() const { return http.method; }
    // The value of a query parameter, its name compared case-insensitively.
    std::optional<std::string> query(std::string_view name) const;
    std::string api_version() const { return query("api-version").value_or(""); }
    // An integer query parameter within [low, high], `fallback` when absent;
    // 400 InvalidQueryParameterValue otherwise.
    int int_query(std::string_view name, int fallback, int low, int high) const;
    // maxresults: 1..1000, 1000 when absent.
    int max_results() const { return int_query("maxresults", 1000, 1, 1000); }
    // The body as a JSON object: absent or empty gives nullopt. Throws CloudError for a wrong
    // content type, a body too large or too deep, malformed JSON or a non-object.
    std::optional<nlohmann::json> json_body() const;
};

ArmRequest make_request(const httplib::Request& http, std::string_view fallback_base_url);

// True when the text nests arrays and objects deeper than `limit` (strings are skipped).
bool nests_deeper_than(std::string_view text, int limit);

}  // namespace bai::arm
