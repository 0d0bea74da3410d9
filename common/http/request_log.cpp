#include "common/http/request_log.h"

#include <stdexcept>

namespace bai::http {

RequestLog::RequestLog(const std::filesystem::path& path) {
    file_ = std::fopen(path.c_str(), "a");
    if (file_ == nullptr) throw std::runtime_error("cannot open request log " + path.string());
}

RequestLog::~RequestLog() { std::fclose(file_); }

void RequestLog::record(const std::string& service, const std::string& method,
                        const std::string& path, int status, double milliseconds) {
    std::lock_guard lock(mutex_);
    std::fprintf(file_, "%s %s %s %d %.3f\n", service.c_str(), method.c_str(), path.c_str(), status,
                 milliseconds);
    std::fflush(file_);
}

}  // namespace bai::http
