// A replay's trace: one line per event, "VIRTUAL-TIME ACTOR EVENT", the time counted from the
// replay's start ("0d00:30:00.000"). Written by the replay's steps and, through the engine's
// hooks, by its threads (which take turns on the virtual clock, so the order is the same on
// every run of the same file and seed).
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "emulator/engine/clock.h"

namespace bai::scenarios {

class TraceLog {
public:
    TraceLog(const engine::Clock& clock, time::TimePoint start) : clock_(clock), start_(start) {}

    void add(const std::string& actor, const std::string& event);
    std::vector<std::string> lines() const;
    // The last `count` lines, one per line.
    std::string tail(size_t count) const;

    // "1d02:03:04.005"
    static std::string format_offset(std::chrono::nanoseconds offset);

private:
    const engine::Clock& clock_;
    time::TimePoint start_;
    mutable std::mutex mutex_;
    std::vector<std::string> lines_;
};

}  // namespace bai::scenarios
