// An error as the storage services report it: HTTP status, x-ms-error-code, message.
#pragma once

#include <stdexcept>
#include <string>

namespace bai::storage {

class StorageError : public std::runtime_error {
public:
    StorageError(int status, std::string code, const std::string& message, std::string authentication_detail = "")
        : std::runtime_error(message),
          status_(status),
          code_(std::move(code)),
          authentication_detail_(std::move(authentication_detail)) {}
    int status() const { return status_; }
    const std::string& code() const { return code_; }
    // The body's AuthenticationErrorDetail, when the service gives one ("" for none).
    const std::string& authentication_detail() const { return authentication_detail_; }

private:
    int status_;
    std::string code_;
    std::string authentication_detail_;
};

[[noreturn]] inline void fail(int status, std::string code, const std::string& message) {
    throw StorageError(status, std::move(code), message);
}

}  // namespace bai::storage
