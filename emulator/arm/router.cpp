#include "emulator/arm/router.h"

#include <cctype>

#include "common/crypto/random_id.h"
#include "common/log/logger.h"
#include "emulator/arm/bearer_token.h"
#include "emulator/arm/cloud_error.h"
#include "emulator/arm/resource_view.h"
#include "emulator/arm/text.h"
#include "fake_storage/accounts/account_registry.h"

namespace bai::arm {
namespace {

bool is_capture(const std::string& segment) {
    return segment.size() > 2 && segment.front() == '{' && segment.back() == '}';
}

bool path_matches(const Route& route, const std::vector<std::string>& segments) {
    if (route.pattern.size() != segments.size()) return false;
    for (size_t i = 0; i < segments.size(); ++i) {
        if (!is_capture(route.pattern[i]) && !iequals(route.pattern[i], segments[i])) return false;
    }
    return true;
}

bool well_formed_version(std::string_view v) {
    if (v.size() < 10) return false;
    for (size_t i = 0; i < 10; ++i) {
        bool dash = i == 4 || i == 7;
        if (dash ? v[i] != '-' : !std::isdigit(static_cast<unsigned char>(v[i]))) return false;
    }
    return v.size() == 10 || (v[10] == '-' && v.size() > 11);
}

std::string supported_versions(Versions versions) {
    switch (versions) {
        case Versions::batchai_2018: return std::string(kApi2018);
        case Versions::batchai_preview: return std::string(kApiPreview) + ", " + std::string(kApi2018March);
        case Versions::batchai_stable: return std::string(kApi2018March) + ", " + std::string(kApi2018);
        case Versions::batchai_both:
            return std::string(kApiPreview) + ", " + std::string(kApi2018March) + ", " + std::string(kApi2018);
        case Versions::any_dated: return "any";
    }
    return {};
}

bool name_chars_ok(const std::string& value, bool dots, bool parens) {
    for (char c : value) {
        bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ||
                  (dots && c == '.') || (parens && (c == '(' || c == ')'));
        if (!ok) return false;
    }
    return true;
}

}  // namespace

const std::string& Params::operator[](std::string_view name) const {
    static const std::string empty;
    for (const auto& [key, value] : values_) {
        if (key == name) return value;
    }
    return empty;
}

bool version_matches(Versions versions, std::string_view v) {
    switch (versions) {
        case Versions::batchai_2018: return v == kApi2018;
        case Versions::batchai_preview: return flat_api(v);
        case Versions::batchai_stable: return v == kApi2018 || v == kApi2018March;
        case Versions::batchai_both: return v == kApi2018 || flat_api(v);
        case Versions::any_dated: return well_formed_version(v);
    }
    return false;
}

void check_name(std::string_view name, const std::string& value, std::string_view api_version) {
    if (name == "operationToken") {
        if (value.empty() || value.size() > 1024) {
            throw bad_request("InvalidParameter", "the operation token must be 1 to 1024 characters", std::string(name));
        }
        return;
    }
    if (name == "subscriptionId" || name == "location" || name == "operationId" || name == "providerNamespace") {
        if (value.empty() || value.size() > 128) {
            throw bad_request("InvalidParameter", std::string(name) + " must be 1 to 128 characters", std::string(name));
        }
        return;
    }
    if (name == "resourceGroupName") {
        if (value.empty() || value.size() > 90 || !name_chars_ok(value, true, true) || value.back() == '.') {
            throw bad_request("InvalidResourceGroupName",
                              "Resource group names only allow alphanumeric characters, periods, underscores, "
                              "hyphens and parenthesis, cannot end in a period and are 1 to 90 characters: '" +
                                  value + "'",
                              std::string(name));
        }
        return;
    }
    if (name == "accountName") {
        if (!storage::is_valid_account_name(value)) {
            throw bad_request("AccountNameInvalid",
                              value + " is not a valid storage account name. Storage account name must be "
                                      "between 3 and 24 characters in length and use numbers and lower-case "
                                      "letters only.",
                              std::string(name));
        }
        return;
    }
    if (name == "batchAccountName") {
        if (!storage::is_valid_account_name(value)) {  // the same rule as storage accounts'
            throw bad_request("AccountNameInvalid",
                              "Account name '" + value + "' is invalid. Account names must be 3 to 24 characters long "
                              "and use lower-case letters and numbers only.",
                              std::string(name));
        }
        return;
    }
    if (name == "virtualNetworkName" || name == "subnetName") {
        if (value.empty() || value.size() > 80 || !name_chars_ok(value, true, false) || value.back() == '.') {
            throw bad_request("InvalidResourceName",
                              "Resource name " + value + " is invalid. The name can be up to 80 characters long. It must "
                              "begin with a word character, and it must end with a word character or with '_'. The name "
                              "may contain word characters or '.', '-', '_'.",
                              std::string(name));
        }
        return;
    }
    // workspaceName, experimentName, clusterName, jobName, fileServerName
    bool dots = flat_api(api_version);
    // "." and ".." would name a directory of the job's output path, not one of its own.
    const bool only_dots = value.find_first_not_of('.') == std::string::npos;
    if (value.empty() || value.size() > 64 || !name_chars_ok(value, dots, false) || only_dots) {
        throw bad_request("InvalidResourceName",
                          std::string(name) + " '" + value + "' must be 1 to 64 letters, digits, hyphens" +
                              (dots ? ", periods" : "") + " or underscores",
                          std::string(name));
    }
}

void Router::add(std::string method, std::string_view pattern, Versions versions, std::string operation,
                 Handler handler) {
    routes_.push_back({std::move(method), split_path(pattern), versions, std::move(operation), std::move(handler)});
}

void Router::dispatch(const httplib::Request& http, httplib::Response& res) const {
    res.set_header("x-ms-request-id", crypto::uuid4());
    try {
        const std::string token = require_bearer_token(http);
        if (token_check_) token_check_(token);
        run(make_request(http, fallback_base_url_), res);
    } catch (const CloudError& e) {
        for (const auto& [name, value] : e.headers) res.set_header(name, value);
        send_json(res, e.status(), e.body());
    } catch (const std::exception& e) {
        log::error("ARM " + http.method + " " + http.path + ": " + e.what());
        send_json(res, 500, CloudError(500, "InternalServerError", std::string("The emulator failed: ") + e.what()).body());
    }
}

void Router::run(const ArmRequest& request, httplib::Response& res) const {
    bool path_known = false;
    const Route* version_mismatch = nullptr;
    std::string api_version = request.api_version();
    for (const Route& route : routes_) {
        if (!path_matches(route, request.segments)) continue;
        path_known = true;
        if (route.method != request.method()) continue;
        if (!request.query("api-version")) {
            throw bad_request("MissingApiVersionParameter",
                              "The api-version query parameter (?api-version=) is required for all requests.");
        }
        if (!version_matches(route.versions, api_version)) {
            version_mismatch = &route;
            continue;
        }
        Params params;
        for (size_t i = 0; i < route.pattern.size(); ++i) {
            const std::string& p = route.pattern[i];
            if (!is_capture(p)) continue;
            std::string name = p.substr(1, p.size() - 2);
            check_name(name, request.segments[i], api_version);
            params.add(std::move(name), request.segments[i]);
        }
        route.handler(request, params, res);
        return;
    }
    if (version_mismatch) {
        if (!well_formed_version(api_version)) {
            throw bad_request("InvalidApiVersionParameter",
                              "The api-version '" + api_version + "' is invalid. The supported versions are '" +
                                  supported_versions(version_mismatch->versions) + "'.");
        }
        throw bad_request("NoRegisteredProviderFound",
                          "No registered resource provider found for API version '" + api_version +
                              "' and this path. The supported api-versions are '" +
                              supported_versions(version_mismatch->versions) + "'.");
    }
    if (path_known) {
        throw CloudError(405, "MethodNotAllowed",
                         "The requested resource does not support http method '" + request.method() + "'.");
    }
    throw CloudError(404, "NotFound", "No HTTP resource was found that matches the request URI '" + request.http.path + "'.");
}

}  // namespace bai::arm
