// ARM routing: path templates with {captures} whose literal segments match case-insensitively,
// the api-versions each route serves, the naming rules of each captured name, and the
// conversion of CloudError (and anything unexpected) into the ARM error response.
#pragma once

#include <httplib.h>

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "emulator/arm/arm_request.h"

namespace bai::arm {

inline constexpr std::string_view kApi2018 = "2018-05-01";
inline constexpr std::string_view kApiPreview = "2017-09-01-preview";
inline constexpr std::string_view kApi2018March = "2018-03-01";

// Whether an api-version is one of the flat API's (resources in a group, no workspaces).
inline bool flat_api(std::string_view v) { return v == kApiPreview || v == kApi2018March; }

enum class Versions {
    batchai_2018,     // 2018-05-01
    batchai_preview,  // the flat API: 2017-09-01-preview and 2018-03-01
    batchai_stable,   // 2018-05-01 and 2018-03-01 (usages)
    batchai_both,     // all three
    any_dated,        // Microsoft.Resources and Microsoft.Storage: any YYYY-MM-DD[-preview]
};

class Params {
public:
    const std::string& operator[](std::string_view name) const;
    void add(std::string name, std::string value) { values_.emplace_back(std::move(name), std::move(value)); }

private:
    std::vector<std::pair<std::string, std::string>> values_;
};

using Handler = std::function<void(const ArmRequest&, const Params&, httplib::Response&)>;

struct Route {
    std::string method;
    std::vector<std::string> pattern;  // segments; "{name}" captures one
    Versions versions;
    std::string operation;  // "Microsoft.BatchAI/workspaces/read", listed by Operations_List
    Handler handler;
};

class Router {
public:
    explicit Router(std::string fallback_base_url) : fallback_base_url_(std::move(fallback_base_url)) {}
    void add(std::string method, std::string_view pattern, Versions versions, std::string operation,
             Handler handler);
    // Answers every request, errors included; never throws.
    void dispatch(const httplib::Request& http, httplib::Response& res) const;
    const std::vector<Route>& routes() const { return routes_; }
    // Run on every request's bearer token after the header's own check (--strict-auth).
    void set_token_check(std::function<void(const std::string& token)> check) { token_check_ = std::move(check); }

private:
    void run(const ArmRequest& request, httplib::Response& res) const;
    std::string fallback_base_url_;
    std::vector<Route> routes_;
    std::function<void(const std::string& token)> token_check_;
};

bool version_matches(Versions versions, std::string_view api_version);
// Throws CloudError when `value`, captured as `name`, breaks the name rules of `api_version`.
void check_name(std::string_view name, const std::string& value, std::string_view api_version);

}  // namespace bai::arm
