// The emulator's ARM endpoint as bai uses it: requests with api-version and a bearer token,
// long-running operations followed to their end, list pages followed through nextLink, and
// CloudError bodies turned into CliError ("(Code) message").
#pragma once

#include <httplib.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/endpoints/endpoints_file.h"

namespace bai::cli {

using Query = std::vector<std::pair<std::string, std::string>>;

class ArmClient {
public:
    ArmClient(endpoints::Endpoints endpoints, std::string subscription);

    const std::string& subscription() const { return subscription_; }
    const endpoints::Endpoints& endpoints() const { return endpoints_; }

    struct Response {
        int status = 0;
        nlohmann::json body;  // null when empty
        httplib::Headers headers;
    };
    // One request. Throws CliError when the emulator cannot be reached.
    Response send(const std::string& method, const std::string& path, const std::string& api_version,
                  const Query& query = {}, const std::optional<nlohmann::json>& body = std::nullopt);

    // Throw CliError for a non-2xx answer (exit status 3 for 404).
    nlohmann::json get(const std::string& path, const std::string& api_version);
    nlohmann::json post(const std::string& path, const std::string& api_version, const Query& query = {},
                        const std::optional<nlohmann::json>& body = std::nullopt);
    nlohmann::json patch(const std::string& path, const std::string& api_version, const nlohmann::json& body);
    // Every item of every page.
    // The first page with `method` (GET, or POST for listOutputFiles), the next ones with GET.
    nlohmann::json list(const std::string& path, const std::string& api_version, const Query& query = {},
                        const std::string& method = "GET");
    // PUT, then follow the operation (Azure-AsyncOperation) and GET the resource when it succeeds.
    // With no_wait: null once the operation is accepted.
    nlohmann::json create(const std::string& path, const std::string& api_version, const nlohmann::json& body,
                          bool no_wait = false);
    // DELETE (or a POST action such as terminate) followed to its end unless no_wait. False when
    // the resource was not there (204 without an operation).
    bool delete_resource(const std::string& path, const std::string& api_version, bool no_wait = false);
    void post_action(const std::string& path, const std::string& api_version, bool no_wait = false);

private:
    void follow_operation(const Response& accepted, const std::string& what);
    [[noreturn]] void fail(const Response& response, const std::string& what) const;
    std::string path_of(const std::string& url) const;

    endpoints::Endpoints endpoints_;
    std::string subscription_;
    std::unique_ptr<httplib::Client> http_;
};

// "/subscriptions/S/resourceGroups/G/providers/Microsoft.BatchAI" and below.
std::string group_path(const ArmClient& arm, const std::string& group);
std::string batchai_path(const ArmClient& arm, const std::string& group);

}  // namespace bai::cli
