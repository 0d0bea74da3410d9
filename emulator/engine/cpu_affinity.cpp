#include "emulator/engine/cpu_affinity.h"

#include <atomic>
#include <mutex>

namespace bai::engine {
namespace {

cpu_set_t children_set;
cpu_set_t beside_set;  // children_set less the turn-takers' CPU
std::once_flag children_set_once;
std::atomic<bool> children_set_known{false};

}  // namespace

bool run_threads_on_one_cpu() {
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (::sched_getaffinity(0, sizeof allowed, &allowed) != 0 || CPU_COUNT(&allowed) < 2) return false;
    const int cpu = ::sched_getcpu();
    if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &allowed)) return false;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    // Published before the move: a thread that sees the narrower mask sees this too. The first
    // call's set stays (a later call may come from a thread it narrowed).
    std::call_once(children_set_once, [&] {
        children_set = allowed;
        beside_set = allowed;
        CPU_CLR(cpu, &beside_set);
        children_set_known.store(true, std::memory_order_release);
    });
    return ::sched_setaffinity(0, sizeof one, &one) == 0;
}

std::optional<cpu_set_t> children_cpus() {
    if (!children_set_known.load(std::memory_order_acquire)) return std::nullopt;
    return children_set;
}

bool run_beside_turns() {
    if (!children_set_known.load(std::memory_order_acquire)) return false;
    return ::sched_setaffinity(0, sizeof beside_set, &beside_set) == 0;
}

}  // namespace bai::engine
