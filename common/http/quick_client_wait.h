// Waiting for a keep-alive client's next request without going to sleep, when the client is a
// quick one.
//
// A connection's thread that has sent its answer waits in poll() for the next request. With a
// client that sends it at once (a loop of small reads or writes, wrk), that sleep and the
// wake-up that ends it are most of a small request's round trip on a VM: the CPU idles, and
// waking it again takes longer than answering a 4 KiB GET (measured: 15,000 GETs/s on one
// connection with the sleep, 26,000 without it). So a connection whose client sent its last
// request within kQuick of the answer before it first checks for the next one for up to kSpin,
// yielding the CPU between checks, before it sleeps.
//
// What it costs: at most kSpin of one CPU per request of a quick client, nothing for any other
// (a client that takes longer than kQuick to follow an answer is not waited for this way until
// it is quick again). Only one thread of the process spins at a time, and none while any
// request is being answered (process-wide), so that spinning never takes a CPU from work: with
// many busy connections no one spins. Plain connections only (a TLS session may hold bytes
// already read from the socket).
#pragma once

#include <chrono>

namespace bai::http {

class QuickClientWait {
public:
    using Clock = std::chrono::steady_clock;
    static constexpr std::chrono::microseconds kSpin{50};
    static constexpr std::chrono::microseconds kQuick{100};

    // The answer to a request went out on this connection (at `now`).
    void answered(Clock::time_point now = Clock::now()) { answered_ = now; }
    // The first bytes of the next request are in (since `now`): whether the client was quick.
    void arrived(Clock::time_point now = Clock::now()) { quick_ = answered_ != Clock::time_point() && now - answered_ < kQuick; }
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
    Clock::time_point answered_{};
    bool quick_ = false;
};

}  // namespace bai::http
