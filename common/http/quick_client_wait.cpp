#include "common/http/quick_client_wait.h"

#include <sched.h>
#include <sys/socket.h>

#include <atomic>
#include <cerrno>

namespace bai::http {

namespace {

std::atomic<int> busy_requests{0};
std::atomic<bool> someone_spins{false};

}  // namespace

QuickClientWait::Busy::Busy() { busy_requests.fetch_add(1, std::memory_order_relaxed); }
QuickClientWait::Busy::~Busy() { busy_requests.fetch_sub(1, std::memory_order_relaxed); }

bool QuickClientWait::spin(int fd) {
    if (!quick_ || busy_requests.load(std::memory_order_relaxed) != 0) return false;
    if (someone_spins.exchange(true, std::memory_order_acquire)) return false;
    const Clock::time_point until = Clock::now() + kSpin;
    bool ready = false;
    for (;;) {
        char byte;
        const ssize_t n = ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
        if (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
            ready = true;
            break;
        }
        if (busy_requests.load(std::memory_order_relaxed) != 0 || Clock::now() >= until) break;
        sched_yield();  // a thread woken on this CPU (another connection's) runs first
    }
    someone_spins.store(false, std::memory_order_release);
    return ready;
}

}  // namespace bai::http
