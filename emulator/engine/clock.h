// The engine's time: everything it times (maxWallClockTime, LRO-free waits, auto-scale, node
// preparation delays) reads now() and sleeps through wait_until(), so that a virtual clock can
// stand in for the real one in scenarios and tests.
#pragma once

#include <condition_variable>
#include <mutex>
#include <utility>
#include <vector>

#include "common/time/timestamps.h"

namespace bai::engine {

class Clock {
public:
    virtual ~Clock() = default;
    virtual time::TimePoint now() const = 0;
    // Waits on `cv` (with `lock` held) until notified or the clock reaches `deadline`.
    virtual void wait_until(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                            time::TimePoint deadline) = 0;
};

class RealClock : public Clock {
public:
    time::TimePoint now() const override { return time::now(); }
    void wait_until(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                    time::TimePoint deadline) override;
};

// Time that moves only when advance() is called; waiters wake then and re-check their deadline.
class VirtualClock : public Clock {
public:
    explicit VirtualClock(time::TimePoint start) : now_(start) {}
    time::TimePoint now() const override;
    void wait_until(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                    time::TimePoint deadline) override;
    void advance(std::chrono::nanoseconds by);

private:
    mutable std::mutex mutex_;
    time::TimePoint now_;
    // Each waiter's mutex and condition: advance() notifies with the waiter's mutex held, so a
    // waiter between its deadline check and its wait cannot miss the wake-up.
    std::vector<std::pair<std::mutex*, std::condition_variable*>> waiting_;
};

}  // namespace bai::engine
