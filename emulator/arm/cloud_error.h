// The ARM error envelope, {"error":{"code","message","target","details"}}, and the HTTP status
// that goes with it. Handlers throw CloudError; the router turns it into the response.
#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace bai::arm {

struct ErrorDetail {
    std::string code;
    std::string message;
    std::string target;
};

class CloudError : public std::runtime_error {
public:
    CloudError(int status, std::string code, std::string message, std::string target = {},
               std::vector<ErrorDetail> details = {});

    int status() const { return status_; }
    const std::string& code() const { return code_; }
    const std::string& target() const { return target_; }
    const std::vector<ErrorDetail>& details() const { return details_; }
    // Extra response headers (the gateway's x-ms-failure-cause).
    std::vector<std::pair<std::string, std::string>> headers;

    nlohmann::json body() const;

private:
    int status_;
    std::string code_;
    std::string target_;
    std::vector<ErrorDetail> details_;
};

CloudError bad_request(std::string code, std::string message, std::string target = {});

}  // namespace bai::arm
