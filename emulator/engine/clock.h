// The engine's time: everything it times (maxWallClockTime, auto-scale idleness, a declared
// workload's duration) reads now() and sleeps through wait_until(), so that a virtual clock can
// stand in for the real one in scenarios and tests.
//
// A VirtualClock also makes the engine's threads take turns (the scenarios' determinism): the threads
// that do the engine's work (its event loop, node setups, job runs) are participants, and only
// one of them runs at a time. A participant runs until it sleeps on the clock or ends; then the
// clock resumes the next one that is due, in (due time, order) order, where the order of
// participants due at the same instant is a permutation of their admission numbers fixed by the
// seed.
// So the same inputs give the same interleaving, run after run. A participant that waits for
// something real (a process) keeps its turn: time stands still until it is done.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "common/time/timestamps.h"

namespace bai::engine {

class Clock {
public:
    virtual ~Clock() = default;
    virtual time::TimePoint now() const = 0;
    // Waits on `cv` (with `lock` held) until woken or the clock reaches `deadline`; callers check
    // their condition again when it returns.
    virtual void wait_until(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                            time::TimePoint deadline) = 0;
    // Wakes the threads waiting on `cv` through wait_until. Everything that notifies a condition
    // that someone may wait on through a clock notifies it here, after changing what they check.
    virtual void wake(std::condition_variable& cv) { cv.notify_all(); }

    // Participants. admit() is called by the thread that creates one, before it does;
    // the new thread calls enter() with the ticket first and leave() last (Participation does).
    struct Ticket;
    virtual std::shared_ptr<Ticket> admit() { return nullptr; }
    virtual void enter(const std::shared_ptr<Ticket>&) {}
    virtual void leave() {}
    // A ticket whose thread never started.
    virtual void forfeit(const std::shared_ptr<Ticket>&) {}
    // Turns taken one at a time (true, a VirtualClock's default) or not: an engine that stops
    // lets its threads end however they wait.
    virtual void set_serial(bool) {}
    // Waits until no participant runs or is due: a thread that is not one (the emulator starting
    // its engines) lets one engine's threads settle before it admits the next, so that the order
    // in which they first wait, which orders their turns, is the same on every run.
    virtual void quiesce() {}
};

// A participant's life: construct it (admit) where the thread is created, move it into the
// thread, call begin() first there; leaves when destroyed.
class Participation {
public:
    explicit Participation(Clock& clock) : clock_(&clock), ticket_(clock.admit()) {}
    Participation(Participation&& other) noexcept
        : clock_(std::exchange(other.clock_, nullptr)), ticket_(std::move(other.ticket_)), entered_(other.entered_) {}
    Participation& operator=(Participation&&) = delete;
    ~Participation() {
        if (!clock_) return;
        if (entered_) {
            clock_->leave();
        } else {
            clock_->forfeit(ticket_);
        }
    }
    void begin() {
        clock_->enter(ticket_);
        entered_ = true;
    }

private:
    Clock* clock_;
    std::shared_ptr<Clock::Ticket> ticket_;
    bool entered_ = false;
};

class RealClock : public Clock {
public:
    time::TimePoint now() const override { return time::now(); }
    void wait_until(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                    time::TimePoint deadline) override;
};

// Time that moves only when advance() is called.
class VirtualClock : public Clock {
public:
    explicit VirtualClock(time::TimePoint start, std::uint64_t seed = 0) : now_(start), seed_(seed) {}
    time::TimePoint now() const override;
    void wait_until(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                    time::TimePoint deadline) override;
    void wake(std::condition_variable& cv) override;
    std::shared_ptr<Ticket> admit() override;
    void enter(const std::shared_ptr<Ticket>& ticket) override;
    void leave() override;
    void forfeit(const std::shared_ptr<Ticket>& ticket) override;

    // Moves time forward by `by`, stopping at each deadline a waiter has on the way: there it
    // lets every due participant run, one at a time, until none is due (settle). False when a
    // participant still ran after `real_limit` of real time (a process that does not end).
    bool advance(std::chrono::nanoseconds by,
                 std::chrono::nanoseconds real_limit = std::chrono::hours(24 * 365));
    // Waits until no participant runs and none is due at the present instant. False after
    // `real_limit` of real time.
    bool settle(std::chrono::nanoseconds real_limit = std::chrono::hours(24 * 365));
    void set_serial(bool serial) override;
    void quiesce() override { settle(); }

private:
    struct Waiter;
    void dispatch_locked();
    void wait_turn_locked(std::unique_lock<std::mutex>& guard, const std::shared_ptr<Waiter>& waiter);
    std::shared_ptr<Waiter> add_waiter_locked(time::TimePoint due, std::condition_variable* cv, bool participant);
    bool settled_locked() const;
    std::optional<time::TimePoint> next_deadline_locked() const;
    std::uint64_t order_of(std::uint64_t number) const;

    mutable std::mutex mutex_;
    time::TimePoint now_;
    std::uint64_t seed_;
    bool serial_ = true;
    int running_ = 0;  // participants that hold a turn
    std::uint64_t next_seq_ = 0;
    std::uint64_t next_participant_ = 0;
    std::vector<std::shared_ptr<Waiter>> waiters_;
    std::condition_variable settled_cv_;
};

}  // namespace bai::engine
