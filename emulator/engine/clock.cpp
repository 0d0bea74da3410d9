#include "emulator/engine/clock.h"

#include <algorithm>

namespace bai::engine {

void RealClock::wait_until(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                           time::TimePoint deadline) {
    auto remaining = deadline - time::now();
    if (remaining <= std::chrono::nanoseconds::zero()) return;
    // A steady-clock wait: a change of the system time neither cuts it short nor stretches it.
    cv.wait_for(lock, remaining);
}

time::TimePoint VirtualClock::now() const {
    std::lock_guard guard(mutex_);
    return now_;
}

void VirtualClock::wait_until(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                              time::TimePoint deadline) {
    {
        std::lock_guard guard(mutex_);
        if (now_ >= deadline) return;
        waiting_.emplace_back(lock.mutex(), &cv);
    }
    cv.wait(lock);
    std::lock_guard guard(mutex_);
    waiting_.erase(std::find(waiting_.begin(), waiting_.end(), std::pair{lock.mutex(), &cv}));
}

void VirtualClock::advance(std::chrono::nanoseconds by) {
    std::vector<std::pair<std::mutex*, std::condition_variable*>> waiters;
    {
        std::lock_guard guard(mutex_);
        now_ += by;
        waiters = waiting_;
    }
    for (auto [mutex, cv] : waiters) {
        std::lock_guard waiter(*mutex);
        cv->notify_all();
    }
}

}  // namespace bai::engine
