// The processes of one node setup or one job run, so that another thread can stop them all:
// cancel() kills what runs and makes every later start() fail at once.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "emulator/engine/clock.h"
#include "emulator/engine/process.h"

namespace bai::engine {

class RunControl {
public:
    // Starts a process, or returns nullptr when the run was cancelled. Throws as Process::start.
    std::shared_ptr<Process> start(const ProcessSpec& spec);
    // Kills every process of the run (their groups, SIGKILL) and refuses later starts. `reason`
    // is kept for the run to report.
    void cancel(const std::string& reason);
    bool cancelled() const;
    std::string reason() const;
    // Kills the processes still running without cancelling the run (TensorFlow's parameter
    // servers once the workers are done).
    void kill(const std::shared_ptr<Process>& process);
    // Waits on `clock` until `deadline`; false when the run is cancelled first (a declared
    // workload's time, which cancel() cuts short as it kills processes).
    bool sleep_until(Clock& clock, time::TimePoint deadline);

private:
    mutable std::mutex mutex_;
    bool cancelled_ = false;
    std::string reason_;
    std::vector<std::weak_ptr<Process>> processes_;
    std::condition_variable cancelled_cv_;
    Clock* sleeping_on_ = nullptr;  // the clock sleep_until waits through, to wake it there
};

}  // namespace bai::engine
