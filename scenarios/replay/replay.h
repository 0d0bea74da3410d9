// Replays a scenario file: starts the emulator in-process on a virtual clock with the
// scenario's declared workloads, runs its steps in order, and records the trace. The rules of
// time and determinism are in scenarios/README.md.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/time/timestamps.h"
#include "scenarios/replay/scenario_file.h"

namespace bai::scenarios {

struct ReplayOptions {
    std::optional<std::uint64_t> seed;  // the scenario's `seed`, else 1
    // How long (real time) the clock waits for real processes before a step fails.
    std::chrono::seconds real_limit{300};
    // The data directory (kept); a temporary one, removed at the end, when empty.
    std::filesystem::path data_dir;
};

struct ReplayResult {
    bool passed = false;
    std::uint64_t seed = 0;
    std::vector<std::string> trace;
    // When it failed: "FILE:LINE: what was expected, what was found".
    std::string failure;
    std::chrono::nanoseconds virtual_time{0};  // how far the clock moved
};

ReplayResult replay(const Scenario& scenario, const ReplayOptions& options);

// The virtual clock's start: the day Batch AI's 2018-05-01 API became the service's.
time::TimePoint replay_epoch();

}  // namespace bai::scenarios
