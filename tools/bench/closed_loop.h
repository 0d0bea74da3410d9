// What the closed-loop load generators (arm_load, storage_load) share: client threads that each
// record how long their successful requests took, and the JSON line that reports them.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace bai::bench {

// Milliseconds since `start`.
inline double ms_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// Runs `client_loop(mine)` on `clients` threads at once; each appends to `mine` the milliseconds
// of its requests that succeeded. Returns all of them, sorted.
inline std::vector<double> run_clients(int clients, const std::function<void(std::vector<double>&)>& client_loop) {
    std::mutex mutex;
    std::vector<double> latencies;
    std::vector<std::thread> threads;
    for (int c = 0; c < clients; ++c) {
        threads.emplace_back([&] {
            std::vector<double> mine;
            client_loop(mine);
            std::lock_guard lock(mutex);
            latencies.insert(latencies.end(), mine.begin(), mine.end());
        });
    }
    for (auto& t : threads) t.join();
    std::sort(latencies.begin(), latencies.end());
    return latencies;
}

// Prints {"requests", "errors", "seconds", "per_second", "p50_ms", "p90_ms", "p99_ms"} for the
// sorted latencies of the requests that succeeded within `seconds`.
inline void print_summary(const std::vector<double>& sorted, long errors, double seconds) {
    auto pct = [&](double p) {
        return sorted.empty() ? 0.0 : sorted[std::min(sorted.size() - 1, static_cast<size_t>(p * sorted.size()))];
    };
    std::printf("{\"requests\": %zu, \"errors\": %ld, \"seconds\": %.3f, \"per_second\": %.1f, "
                "\"p50_ms\": %.3f, \"p90_ms\": %.3f, \"p99_ms\": %.3f}\n",
                sorted.size(), errors, seconds, sorted.size() / seconds, pct(0.5), pct(0.9), pct(0.99));
}

}  // namespace bai::bench
