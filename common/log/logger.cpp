#include "common/log/logger.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

namespace bai::log {
namespace {

std::mutex mutex;
std::FILE* sink = nullptr;

const char* name_of(Level level) {
    switch (level) {
        case Level::debug: return "debug";
        case Level::info: return "info";
        case Level::warning: return "warning";
        case Level::error: return "error";
    }
    return "?";
}

}  // namespace

void open(const std::filesystem::path& path) {
    std::lock_guard lock(mutex);
    if (sink != nullptr) std::fclose(sink);
    sink = std::fopen(path.c_str(), "a");
}

void close() {
    std::lock_guard lock(mutex);
    if (sink != nullptr) std::fclose(sink);
    sink = nullptr;
}

namespace {

void emit(Level level, std::string_view message, bool echo) {
    auto now = std::chrono::system_clock::now();
    std::time_t seconds = std::chrono::system_clock::to_time_t(now);
    auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()) % 1000;
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &utc);

    std::lock_guard lock(mutex);
    if (sink != nullptr) {
        std::fprintf(sink, "%s.%03dZ %s %.*s\n", stamp, static_cast<int>(millis.count()),
                     name_of(level), static_cast<int>(message.size()), message.data());
        std::fflush(sink);
    }
    if (echo && (level >= Level::warning || sink == nullptr)) {
        std::fprintf(stderr, "batchai-emulator: %s: %.*s\n", name_of(level),
                     static_cast<int>(message.size()), message.data());
    }
}

}  // namespace

void write(Level level, std::string_view message) { emit(level, message, true); }

void write_to_file(Level level, std::string_view message) { emit(level, message, false); }

}  // namespace bai::log
