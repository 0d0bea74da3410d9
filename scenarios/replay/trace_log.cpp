#include "scenarios/replay/trace_log.h"

#include <cstdio>

namespace bai::scenarios {

std::string TraceLog::format_offset(std::chrono::nanoseconds offset) {
    long long ms = std::chrono::duration_cast<std::chrono::milliseconds>(offset).count();
    char text[48];
    std::snprintf(text, sizeof text, "%lldd%02lld:%02lld:%02lld.%03lld", ms / 86'400'000, ms / 3'600'000 % 24,
                  ms / 60'000 % 60, ms / 1000 % 60, ms % 1000);
    return text;
}

void TraceLog::add(const std::string& actor, const std::string& event) {
    std::string line = format_offset(clock_.now() - start_);
    line.append(" ").append(actor).append(" ").append(event);
    std::lock_guard guard(mutex_);
    lines_.push_back(std::move(line));
}

std::vector<std::string> TraceLog::lines() const {
    std::lock_guard guard(mutex_);
    return lines_;
}

std::string TraceLog::tail(size_t count) const {
    std::lock_guard guard(mutex_);
    std::string out;
    for (size_t i = lines_.size() > count ? lines_.size() - count : 0; i < lines_.size(); ++i) {
        out.append(lines_[i]).append("\n");
    }
    return out;
}

}  // namespace bai::scenarios
