#include "emulator/arm/cloud_error.h"

namespace bai::arm {

CloudError::CloudError(int status, std::string code, std::string message, std::string target,
                       std::vector<ErrorDetail> details)
    : std::runtime_error(std::move(message)),
      status_(status),
      code_(std::move(code)),
      target_(std::move(target)),
      details_(std::move(details)) {}

nlohmann::json CloudError::body() const {
    nlohmann::json error{{"code", code_}, {"message", what()}};
    if (!target_.empty()) error["target"] = target_;
    if (!details_.empty()) {
        nlohmann::json list = nlohmann::json::array();
        for (const ErrorDetail& d : details_) {
            nlohmann::json item{{"code", d.code}, {"message", d.message}};
            if (!d.target.empty()) item["target"] = d.target;
            list.push_back(std::move(item));
        }
        error["details"] = std::move(list);
    }
    return nlohmann::json{{"error", std::move(error)}};
}

CloudError bad_request(std::string code, std::string message, std::string target) {
    return CloudError(400, std::move(code), std::move(message), std::move(target));
}

}  // namespace bai::arm
