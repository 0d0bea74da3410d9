#include "fake_storage/http/cors.h"

#include <algorithm>

#include "common/text/ascii.h"
#include "fake_storage/engine/storage_error.h"

namespace bai::storage {
namespace {

// Glob matching where '*' stands for any run of characters (dots included, as the service
// matches "*.contoso.com" against "a.b.contoso.com").
bool glob_match(std::string_view pattern, std::string_view text) {
    size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
    while (t < text.size()) {
        if (p < pattern.size() && pattern[p] == '*') {
            star = p++;
            mark = t;
        } else if (p < pattern.size() && pattern[p] == text[t]) {
            ++p;
            ++t;
        } else if (star != std::string_view::npos) {
            p = star + 1;
            t = ++mark;
        } else {
            return false;
        }
    }
    while (p < pattern.size() && pattern[p] == '*') ++p;
    return p == pattern.size();
}

bool method_allowed(const std::string& method, const std::vector<std::string>& allowed) {
    return std::any_of(allowed.begin(), allowed.end(), [&](const std::string& m) { return text::iequals(m, method); });
}

// A header name against a rule's list: equal, or starting with a prefix given as "x-ms-meta-*".
bool header_listed(std::string_view name, const std::vector<std::string>& listed) {
    const std::string lower = text::lower(name);
    for (const std::string& entry : listed) {
        const std::string item = text::lower(entry);
        if (item == lower) return true;
        if (!item.empty() && item.back() == '*' && lower.compare(0, item.size() - 1, item, 0, item.size() - 1) == 0) {
            return true;
        }
    }
    return false;
}

bool any_origin(const CorsRule& rule) {
    return std::find(rule.allowed_origins.begin(), rule.allowed_origins.end(), "*") != rule.allowed_origins.end();
}

}  // namespace

bool cors_origin_allowed(const std::string& origin, const std::vector<std::string>& allowed) {
    const std::string lower = text::lower(text::trim(origin));
    for (const std::string& entry : allowed) {
        if (entry == "*") return true;
        const std::string pattern = text::lower(entry);
        if (pattern.find('*') != std::string::npos ? glob_match(pattern, lower) : pattern == lower) return true;
    }
    return false;
}

void answer_preflight(const StorageRequest& request, httplib::Response& response, const std::vector<CorsRule>& rules) {
    if (!request.has_header("Origin") || !request.has_header("Access-Control-Request-Method")) {
        fail(400, "InvalidHeaderValue",
             std::string("A required CORS header is not present.\nMissingHeaderName:") +
                 (request.has_header("Origin") ? "Access-Control-Request-Method" : "Origin"));
    }
    const std::string origin = request.header("Origin");
    const std::string method = request.header("Access-Control-Request-Method");
    const bool asks_headers = request.has_header("Access-Control-Request-Headers");
    const std::vector<std::string> asked = text::split_list(request.header("Access-Control-Request-Headers"));
    for (const CorsRule& rule : rules) {
        if (!cors_origin_allowed(origin, rule.allowed_origins) || !method_allowed(method, rule.allowed_methods)) continue;
        if (!std::all_of(asked.begin(), asked.end(),
                         [&](const std::string& h) { return header_listed(h, rule.allowed_headers); })) {
            continue;
        }
        response.status = 200;
        response.set_header("Access-Control-Allow-Origin", origin);
        response.set_header("Access-Control-Allow-Methods", method);
        if (asks_headers) response.set_header("Access-Control-Allow-Headers", request.header("Access-Control-Request-Headers"));
        response.set_header("Access-Control-Max-Age", std::to_string(rule.max_age_seconds));
        response.set_header("Access-Control-Allow-Credentials", "true");
        response.set_header("Content-Length", "0");
        return;
    }
    fail(403, "CorsPreflightFailure", "CORS not enabled or no matching rule found for this request.");
}

void add_cors_headers(const StorageRequest& request, httplib::Response& response, const std::vector<CorsRule>& rules) {
    if (rules.empty() || !request.has_header("Origin")) return;
    const std::string origin = request.header("Origin");
    for (const CorsRule& rule : rules) {
        if (!cors_origin_allowed(origin, rule.allowed_origins) || !method_allowed(request.method, rule.allowed_methods)) {
            continue;
        }
        std::vector<std::string> exposed;
        for (const auto& header : response.headers) {
            const std::string& name = header.first;
            if (header_listed(name, rule.exposed_headers) &&
                std::find_if(exposed.begin(), exposed.end(), [&](const std::string& e) { return text::iequals(e, name); }) ==
                    exposed.end()) {
                exposed.push_back(name);
            }
        }
        std::string list;
        for (const std::string& name : exposed) list += (list.empty() ? "" : ",") + name;
        response.set_header("Access-Control-Expose-Headers", list);
        if (any_origin(rule)) {
            response.set_header("Access-Control-Allow-Origin", "*");
        } else {
            response.set_header("Access-Control-Allow-Origin", origin);
            response.set_header("Vary", "Origin");
            response.set_header("Access-Control-Allow-Credentials", "true");
        }
        return;
    }
    response.set_header("Vary", "Origin");
}

}  // namespace bai::storage
