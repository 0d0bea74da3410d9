#include "emulator/engine/clock.h"

#include <algorithm>
#include <tuple>

namespace bai::engine {

void RealClock::wait_until(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                           time::TimePoint deadline) {
    auto remaining = deadline - time::now();
    if (remaining <= std::chrono::nanoseconds::zero()) return;
    // A steady-clock wait: a change of the system time neither cuts it short nor stretches it.
    cv.wait_for(lock, remaining);
}

struct Clock::Ticket {
    virtual ~Ticket() = default;
};

// A thread waiting for its time or its turn: a sleeper (its deadline, woken early through the
// condition it waits on), a new participant, or one coming back from outside.
struct VirtualClock::Waiter : Clock::Ticket {
    std::uint64_t seq = 0;
    std::uint64_t participant_id = 0;  // the participant's, numbered as they are admitted
    time::TimePoint due;
    const std::condition_variable* cv = nullptr;
    bool participant = false;
    bool woken = false;
    std::condition_variable resume;
};

namespace {

// The clock a thread takes part in (nullptr: none).
thread_local const VirtualClock* t_participant_of = nullptr;
thread_local std::uint64_t t_participant_id = 0;

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finalizer
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

}  // namespace

time::TimePoint VirtualClock::now() const {
    std::lock_guard guard(mutex_);
    return now_;
}

std::uint64_t VirtualClock::order_of(std::uint64_t number) const {
    return seed_ == 0 ? number : mix(number ^ mix(seed_));
}

std::shared_ptr<VirtualClock::Waiter> VirtualClock::add_waiter_locked(time::TimePoint due, std::condition_variable* cv,
                                                                      bool participant) {
    auto waiter = std::make_shared<Waiter>();
    waiter->seq = next_seq_++;
    waiter->due = due;
    waiter->cv = cv;
    waiter->participant = participant;
    waiters_.push_back(waiter);
    return waiter;
}

void VirtualClock::dispatch_locked() {
    for (const auto& w : waiters_) {
        if (!w->participant && !w->woken && w->due <= now_) {
            w->woken = true;
            w->resume.notify_all();
        }
    }
    while (!serial_ || running_ == 0) {
        Waiter* best = nullptr;
        for (const auto& w : waiters_) {
            if (!w->participant || w->woken || w->due > now_) continue;
            // Ties go by the participants' numbers, not by when they began to wait: how often a
            // participant waited before (an event loop woken once or twice by the same posts,
            // depending on real timing) must not reorder the ones due at one instant.
            if (!best || std::tuple(w->due, order_of(w->participant_id), w->seq) <
                             std::tuple(best->due, order_of(best->participant_id), best->seq)) {
                best = w.get();
            }
        }
        if (!best) break;
        best->woken = true;
        ++running_;
        best->resume.notify_all();
    }
    if (settled_locked()) settled_cv_.notify_all();
}

void VirtualClock::wait_turn_locked(std::unique_lock<std::mutex>& guard, const std::shared_ptr<Waiter>& waiter) {
    waiter->resume.wait(guard, [&] { return waiter->woken; });
    waiters_.erase(std::find(waiters_.begin(), waiters_.end(), waiter));
}

bool VirtualClock::settled_locked() const {
    if (running_ > 0) return false;
    return std::none_of(waiters_.begin(), waiters_.end(),
                        [&](const auto& w) { return w->participant && !w->woken && w->due <= now_; });
}

std::optional<time::TimePoint> VirtualClock::next_deadline_locked() const {
    std::optional<time::TimePoint> next;
    for (const auto& w : waiters_) {
        if (!w->woken && (!next || w->due < *next)) next = w->due;
    }
    return next;
}

void VirtualClock::wait_until(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                              time::TimePoint deadline) {
    std::unique_lock guard(mutex_);
    if (now_ >= deadline) return;
    const bool participant = t_participant_of == this;
    auto waiter = add_waiter_locked(deadline, &cv, participant);
    if (participant) {
        waiter->participant_id = t_participant_id;
        --running_;
    }
    dispatch_locked();
    lock.unlock();
    wait_turn_locked(guard, waiter);
    guard.unlock();
    lock.lock();
}

void VirtualClock::wake(std::condition_variable& cv) {
    std::lock_guard guard(mutex_);
    for (const auto& w : waiters_) {
        if (w->cv == &cv && !w->woken) w->due = std::min(w->due, now_);
    }
    dispatch_locked();
}

std::shared_ptr<Clock::Ticket> VirtualClock::admit() {
    std::lock_guard guard(mutex_);
    auto waiter = add_waiter_locked(now_, nullptr, true);
    waiter->participant_id = ++next_participant_;
    dispatch_locked();
    return waiter;
}

void VirtualClock::enter(const std::shared_ptr<Ticket>& ticket) {
    auto waiter = std::static_pointer_cast<Waiter>(ticket);
    if (!waiter) return;
    std::unique_lock guard(mutex_);
    wait_turn_locked(guard, waiter);
    t_participant_of = this;
    t_participant_id = waiter->participant_id;
}

void VirtualClock::leave() {
    std::lock_guard guard(mutex_);
    if (t_participant_of != this) return;
    t_participant_of = nullptr;
    --running_;
    dispatch_locked();
}

void VirtualClock::forfeit(const std::shared_ptr<Ticket>& ticket) {
    auto waiter = std::static_pointer_cast<Waiter>(ticket);
    if (!waiter) return;
    std::lock_guard guard(mutex_);
    if (waiter->woken) --running_;
    std::erase(waiters_, waiter);
    dispatch_locked();
}

bool VirtualClock::settle(std::chrono::nanoseconds real_limit) {
    std::unique_lock guard(mutex_);
    auto until = std::chrono::steady_clock::now() + real_limit;
    return settled_cv_.wait_until(guard, until, [&] { return settled_locked(); });
}

bool VirtualClock::advance(std::chrono::nanoseconds by, std::chrono::nanoseconds real_limit) {
    std::unique_lock guard(mutex_);
    const auto until = std::chrono::steady_clock::now() + real_limit;
    const time::TimePoint target = now_ + by;
    while (true) {
        if (!settled_cv_.wait_until(guard, until, [&] { return settled_locked(); })) return false;
        std::optional<time::TimePoint> next = next_deadline_locked();
        if (!next || *next > target) break;
        if (*next > now_) now_ = *next;
        dispatch_locked();
    }
    now_ = target;
    dispatch_locked();
    return settled_cv_.wait_until(guard, until, [&] { return settled_locked(); });
}

void VirtualClock::set_serial(bool serial) {
    std::lock_guard guard(mutex_);
    serial_ = serial;
    dispatch_locked();
}

}  // namespace bai::engine
