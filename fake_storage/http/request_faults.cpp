#include "fake_storage/http/request_faults.h"

#include <thread>

#include "fake_storage/engine/storage_error.h"

namespace bai::storage {

void RequestFaults::fail_next(int requests, int status) {
    std::lock_guard guard(mutex_);
    failing_ = requests;
    status_ = status;
}

void RequestFaults::stall_next(int requests, std::chrono::milliseconds stall) {
    std::lock_guard guard(mutex_);
    stalling_ = requests;
    stall_ = stall;
}

void RequestFaults::recover() {
    std::lock_guard guard(mutex_);
    failing_ = stalling_ = 0;
}

std::optional<RequestFaults::Fault> RequestFaults::next() {
    std::lock_guard guard(mutex_);
    if (failing_ == 0 && stalling_ == 0) return std::nullopt;
    Fault fault;
    if (stalling_ > 0) {
        --stalling_;
        fault.stall = stall_;
    }
    if (failing_ > 0) {
        --failing_;
        fault.status = status_;
    }
    return fault;
}

void fail_as_injected(int status) {
    if (status == 503) fail(503, "ServerBusy", "The server is currently unable to receive requests. Please retry your request.");
    fail(500, "InternalError", "The server encountered an internal error. Please retry the request.");
}

}  // namespace bai::storage
