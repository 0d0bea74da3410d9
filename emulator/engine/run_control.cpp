#include "emulator/engine/run_control.h"

#include <signal.h>

#include <algorithm>

namespace bai::engine {

std::shared_ptr<Process> RunControl::start(const ProcessSpec& spec) {
    std::lock_guard guard(mutex_);
    if (cancelled_) return nullptr;
    std::shared_ptr<Process> process = Process::start(spec);
    std::erase_if(processes_, [](const std::weak_ptr<Process>& p) { return p.expired(); });
    processes_.push_back(process);
    return process;
}

void RunControl::cancel(const std::string& reason) {
    std::lock_guard guard(mutex_);
    if (!cancelled_) reason_ = reason;
    cancelled_ = true;
    for (const auto& weak : processes_) {
        if (auto p = weak.lock()) p->kill_group(SIGKILL);
    }
    if (sleeping_on_) {
        sleeping_on_->wake(cancelled_cv_);
    } else {
        cancelled_cv_.notify_all();
    }
}

bool RunControl::sleep_until(Clock& clock, time::TimePoint deadline) {
    std::unique_lock lock(mutex_);
    sleeping_on_ = &clock;
    while (!cancelled_ && clock.now() < deadline) clock.wait_until(lock, cancelled_cv_, deadline);
    sleeping_on_ = nullptr;
    return !cancelled_;
}

bool RunControl::cancelled() const {
    std::lock_guard guard(mutex_);
    return cancelled_;
}

std::string RunControl::reason() const {
    std::lock_guard guard(mutex_);
    return reason_;
}

void RunControl::kill(const std::shared_ptr<Process>& process) {
    std::lock_guard guard(mutex_);
    process->kill_group(SIGKILL);
}

}  // namespace bai::engine
