#include "emulator/engine/session_child.h"

#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <optional>

#include "emulator/engine/cpu_affinity.h"

namespace bai::engine {

pid_t spawn_in_own_session(char* const argv[], const int stdio[3], bool terminal, std::string_view first_stderr) {
    // fork and exec by hand, not posix_spawn: a controlling terminal and a message before the exec
    // are beyond it. Only async-signal-safe calls in the child.
    const std::optional<cpu_set_t> cpus = children_cpus();  // (read before the fork: no lock in the child)
    const pid_t pid = fork();
    if (pid != 0) return pid;
    setsid();
    if (cpus) sched_setaffinity(0, sizeof *cpus, &*cpus);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    // Every signal as a fresh process has it: an ignored one survives exec, and an emulator
    // started by `nohup ... &` ignores SIGHUP, SIGINT and SIGQUIT: its commands would ignore the
    // hang-up of a client that leaves. (What the daemon catches is reset by exec anyway.)
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    for (int signum = 1; signum < NSIG; ++signum) {
        if (signum != SIGKILL && signum != SIGSTOP) sigaction(signum, &default_action, nullptr);
    }
    for (int i = 0; i < 3; ++i) dup2(stdio[i], i);
    if (terminal) ioctl(0, TIOCSCTTY, 0);
    close_range(3, ~0U, 0);
    if (!first_stderr.empty() && ::write(2, first_stderr.data(), first_stderr.size()) < 0) {
    }
    execv(argv[0], argv);
    _exit(127);
}

}  // namespace bai::engine
