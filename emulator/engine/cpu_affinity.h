// A process whose own threads run on one CPU while the processes it starts get the CPUs it had.
//
// A replay's threads take turns (clock.h): one runs at a time, and every turn is a hand-off
// from one thread to another. Between two CPUs a hand-off wakes the other CPU (an
// inter-processor interrupt; on a virtual machine an exit to the hypervisor); on one CPU it is a
// plain switch. Measured on a 2-core VM: the 1000-job replay bench 16% faster, a third less
// kernel time. What the scenario's jobs start (real commands) is not a turn-taker: it gets
// every CPU the emulator was given.
#pragma once

#include <sched.h>

#include <optional>

namespace bai::engine {

// Moves the calling thread, and the threads it starts after, onto the CPU it runs on now, and
// has Process::start give its children the CPUs the thread had before. Call it before the
// threads are started. False (nothing changed) where the thread has one CPU already or the
// system refuses.
bool run_threads_on_one_cpu();

// The CPUs a started process gets, where they differ from its starting thread's (set by
// run_threads_on_one_cpu; nullopt otherwise).
std::optional<cpu_set_t> children_cpus();

// Moves the calling thread off the turn-takers' CPU onto the others the process had (set by
// run_threads_on_one_cpu): for a thread whose work takes no turn (removing trees in the
// background), which would otherwise share that one CPU with the turns. False (nothing
// changed) where run_threads_on_one_cpu was not called or the system refuses.
bool run_beside_turns();

}  // namespace bai::engine
