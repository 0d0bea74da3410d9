// Waiting for a keep-alive client's next request without going to sleep, when the client is a
// quick one.
//
// A connection's thread that has sent its answer waits in poll() for the next request. With a
// client that sends it at once (a loop of small reads or writes, wrk), that sleep and the
// wake-up that ends it are most of a small request's round trip on a VM: the CPU idles, and
// waking it again takes longer than answering a 4 KiB GET (measured: 15,000 GETs/s on one
// connection with the sleep, 26,000 without it). So a connection whose client sent its last
// request within kQuick of the connection's starting to wait for it first checks for the next one
// for up to kSpin, yielding the CPU between checks, before it sleeps.
//
// What it costs: at most kSpin of one CPU per request of a quick client, nothing for any other
// (a client that takes longer than kQuick is not waited for this way until it is quick again).
// Only one thread of the process spins at a time, and none while a request of any listener is
// being answered (from its parsed head to its answer sent, or handed over in-process), so that
// spinning does not take a CPU from another request: with many busy connections no one spins.
// (Other work of the process, a job's set-up say, is not counted: a spinner yields to it.)
// Plain connections only (a TLS session may hold bytes already read from the socket).
#pragma once

#include <chrono>

namespace bai::http {

class QuickClientWait {
public:
    using Clock = std::chrono::steady_clock;
    static constexpr std::chrono::microseconds kSpin{50};
    static constexpr std::chrono::microseconds kQuick{100};

    // The connection starts waiting for its next request (at `now`), its last answer sent.
    void waits(Clock::time_point now = Clock::now()) { waiting_since_ = now; }
    // The first bytes of the next request are in (at `now`): whether the client was quick.
    void arrived(Clock::time_point now = Clock::now()) {
        quick_ = waiting_since_ != Clock::time_point() && now - waiting_since_ < kQuick;
    }
    bool quick() const { return quick_; }

    // Before waiting on `fd` for the next request: when the client is quick and nothing else is
    // being answered, checks for its bytes for up to kSpin. True when bytes (or the end of the
    // stream, or an error) are there to be read without waiting.
    bool spin(int fd);

    // A request is being answered (between reading its head and sending its answer), in any of
    // the process's listeners: no one spins meanwhile.
    class Busy {
    public:
        Busy();
        ~Busy();
        Busy(const Busy&) = delete;
        Busy& operator=(const Busy&) = delete;
    };

private:
    Clock::time_point waiting_since_{};
    bool quick_ = false;
};

}  // namespace bai::http
