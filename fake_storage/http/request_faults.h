// Faults a scenario injects into a storage service's endpoint: the next K requests fail
// with 500 InternalError or 503 ServerBusy, as the service answers when it is unwell, or are
// stalled first. Requests are counted as they arrive, whatever their operation.
#pragma once

#include <chrono>
#include <mutex>
#include <optional>

namespace bai::storage {

class RequestFaults {
public:
    struct Fault {
        int status = 0;  // 0: the request goes on after its stall
        std::chrono::milliseconds stall{0};
    };

    // The next `requests` requests fail with `status` (500 or 503).
    void fail_next(int requests, int status);
    // The next `requests` requests wait `stall` (real time) first.
    void stall_next(int requests, std::chrono::milliseconds stall);
    // The outage is over: what remains of both counts is dropped.
    void recover();
    // What the next request must suffer, if anything; counts it.
    std::optional<Fault> next();

private:
    std::mutex mutex_;
    int failing_ = 0;
    int status_ = 503;
    int stalling_ = 0;
    std::chrono::milliseconds stall_{0};
};

// Throws the StorageError of a failed request's status (ServerBusy or InternalError).
[[noreturn]] void fail_as_injected(int status);

}  // namespace bai::storage
