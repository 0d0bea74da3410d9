// Starting a command as a login's or a node's remote shell would: its own session, on descriptors
// the caller chose, with nothing else of the emulator's.
#pragma once

#include <sys/types.h>

#include <string_view>

namespace bai::engine {

// Forks and execs argv (null-terminated; argv[0] a path) in a session of its own (so that it and
// what it starts are hung up on and killed as a group), with `stdio` as its descriptors 0, 1 and 2
// and no other descriptor of the emulator's, no signal blocked or ignored (each at its default), and every
// CPU the emulator was given (children_cpus). `terminal`: stdio is a terminal's slave, made the
// session's controlling terminal. `first_stderr` is written to its stderr before the exec (from the
// child: a caller's stderr that blocks blocks only it). The process id, or -1 where fork fails.
// The caller keeps its descriptors (close them after) and reaps the child.
pid_t spawn_in_own_session(char* const argv[], const int stdio[3], bool terminal, std::string_view first_stderr = {});

}  // namespace bai::engine
