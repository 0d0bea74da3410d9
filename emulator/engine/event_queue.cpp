#include "emulator/engine/event_queue.h"

namespace bai::engine {

void EventQueue::post(Event event) {
    {
        std::lock_guard guard(mutex_);
        if (stopping_) return;
        events_.push_back(std::move(event));
    }
    clock_.wake(cv_);
}

std::optional<EventQueue::Batch> EventQueue::take(std::optional<time::TimePoint> deadline) {
    std::unique_lock lock(mutex_);
    if (deadline) {
        if (events_.empty() && !stopping_) clock_.wait_until(lock, cv_, *deadline);
    } else {
        while (events_.empty() && !stopping_) clock_.wait_until(lock, cv_, clock_.now() + std::chrono::hours(24));
    }
    if (stopping_) return std::nullopt;
    Batch batch;
    batch.swap(events_);
    return batch;
}

bool EventQueue::stop() {
    {
        std::lock_guard guard(mutex_);
        if (stopping_) return false;
        stopping_ = true;
    }
    clock_.wake(cv_);
    return true;
}

}  // namespace bai::engine
