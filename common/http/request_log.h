// The --debug request log: one line per request with service, method, path, status, milliseconds.
#pragma once

#include <cstdio>
#include <filesystem>
#include <mutex>
#include <string>

namespace bai::http {

class RequestLog {
public:
    // Appends to `path`; throws std::runtime_error when it cannot be opened.
    explicit RequestLog(const std::filesystem::path& path);
    ~RequestLog();
    RequestLog(const RequestLog&) = delete;
    RequestLog& operator=(const RequestLog&) = delete;

    void record(const std::string& service, const std::string& method, const std::string& path,
                int status, double milliseconds);

private:
    std::mutex mutex_;
    std::FILE* file_;
};

}  // namespace bai::http
