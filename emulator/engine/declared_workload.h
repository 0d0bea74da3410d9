// Jobs that run no process (scenarios): a job whose command names a declared workload
// is played by a DeclaredWorkloads instead: it takes virtual time on the engine's clock, prints
// its lines, writes its files and exits with its code. The engine asks before it starts the
// job's processes; without a DeclaredWorkloads (the daemon), every job runs its processes.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "emulator/engine/clock.h"
#include "emulator/engine/run_control.h"
#include "emulator/engine/shell_words.h"

namespace bai::engine {

struct JobOutcome;

struct WorkloadContext {
    std::string job_id;
    const Environment& environment;  // the master's variables ($AZ_BATCHAI_OUTPUT_<ID>, ...)
    // Where a path the job sees (variables already expanded) lies on this machine.
    std::function<std::filesystem::path(const std::string&)> host_file;
    std::filesystem::path stdout_file;  // the master's stdout, on this machine
    // When the engine started the job: the workload's timeline counts from here, not from when
    // its thread got to it, so that advancing the clock while the job is set up changes nothing.
    time::TimePoint started;
    Clock& clock;
    RunControl& control;  // cancelled by terminate, delete, pre-emption, maxWallClockTime
};

class DeclaredWorkloads {
public:
    virtual ~DeclaredWorkloads() = default;
    // nullopt when `command` names no declared workload (the job runs its processes).
    virtual std::optional<JobOutcome> play(const std::string& command, const WorkloadContext& context) = 0;
    // Whether play() would play `command` (runs no process): the job needs none of what its
    // processes would (ssh between its nodes, the scripts mpirun enters them by).
    virtual bool plays(const std::string& command) const = 0;
};

}  // namespace bai::engine
