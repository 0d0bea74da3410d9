// The events other threads post to an engine's own thread, which takes them in batches and
// waits for them through the engine's clock (so that, on a virtual clock, it takes turns with the
// engine's other threads: clock.h). The job engine and the Batch nodes each run one.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>

#include "emulator/engine/clock.h"

namespace bai::engine {

class EventQueue {
public:
    using Event = std::function<void()>;
    using Batch = std::deque<Event>;

    explicit EventQueue(Clock& clock) : clock_(clock) {}

    // Nothing happens once the queue is stopped.
    void post(Event event);
    // The events posted since the last take. With a deadline, waits once (until an event comes
    // or the clock reaches it) and may answer an empty batch; without, waits until an event
    // comes. nullopt once stopped.
    std::optional<Batch> take(std::optional<time::TimePoint> deadline);
    // Makes take answer nullopt; false when it was stopped already.
    bool stop();

    // Runs `question` on the thread that takes the events and waits, in real time, for its answer
    // (or rethrows its exception); nullopt when none came within `patience`.
    template <typename T>
    std::optional<T> ask(std::function<T()> question, std::chrono::seconds patience = std::chrono::seconds(30)) {
        auto result = std::make_shared<std::promise<T>>();
        std::future<T> future = result->get_future();
        post([question = std::move(question), result] {
            try {
                result->set_value(question());
            } catch (...) {
                result->set_exception(std::current_exception());
            }
        });
        if (future.wait_for(patience) != std::future_status::ready) return std::nullopt;
        return future.get();
    }

private:
    Clock& clock_;
    std::mutex mutex_;
    std::condition_variable cv_;
    Batch events_;
    bool stopping_ = false;
};

}  // namespace bai::engine
