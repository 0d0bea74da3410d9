// Plays the workloads a scenario declares (`workload NAME duration D ...`) for the jobs whose
// command line is `workload NAME`: the job engine's DeclaredWorkloads for replays.
#pragma once

#include <map>
#include <mutex>
#include <string>

#include "emulator/engine/declared_workload.h"
#include "scenarios/replay/scenario_file.h"

namespace bai::scenarios {

class WorkloadPlayer : public engine::DeclaredWorkloads {
public:
    explicit WorkloadPlayer(std::map<std::string, Workload> workloads) : workloads_(std::move(workloads)) {}

    // Prints its lines spread over its duration (line k of n after k/(n+1) of it, counted from
    // when the engine started the job), writes its
    // files at the end, then exits with its code; attempts up to fail_first exit with 1. A
    // cancelled attempt (pre-emption, terminate) writes nothing more and counts as an attempt.
    std::optional<engine::JobOutcome> play(const std::string& command, const engine::WorkloadContext& context) override;
    bool plays(const std::string& command) const override;

    // How many times the job has started a workload (a requeued job starts again).
    int attempts(const std::string& job_id) const;

private:
    std::map<std::string, Workload> workloads_;
    mutable std::mutex mutex_;
    std::map<std::string, int> attempts_;
};

}  // namespace bai::scenarios
