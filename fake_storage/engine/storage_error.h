// An error as the storage services report it: HTTP status, x-ms-error-code, message.
#pragma once

#include <stdexcept>
#include <string>

namespace bai::storage {

class StorageError : public std::runtime_error {
public:
    StorageError(int status, std::string code, const std::string& message)
        : std::runtime_error(message), status_(status), code_(std::move(code)) {}
    int status() const { return status_; }
    const std::string& code() const { return code_; }

private:
    int status_;
    std::string code_;
};

[[noreturn]] inline void fail(int status, std::string code, const std::string& message) {
    throw StorageError(status, std::move(code), message);
}

}  // namespace bai::storage
