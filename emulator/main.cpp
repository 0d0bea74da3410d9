#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/version.h"
#include "emulator/daemon/daemon.h"
#include "emulator/daemon/options.h"
#include "scenarios/replay/replay_command.h"

namespace {

// Every reader of a blob holds a descriptor per part (up to 256) and every mount, connection and
// open file through a mount one more: the soft limit of 1024 that many systems give is low.
void raise_open_file_limit() {
    rlimit limit{};
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
    rlim_t wanted = std::min<rlim_t>(limit.rlim_max, 65536);
    if (limit.rlim_cur >= wanted) return;
    limit.rlim_cur = wanted;
    setrlimit(RLIMIT_NOFILE, &limit);
}

}  // namespace

int main(int argc, char** argv) {
    signal(SIGPIPE, SIG_IGN);
    raise_open_file_limit();
    if (argc > 1 && std::string(argv[1]) == "replay") {
        return bai::scenarios::replay_command(std::vector<std::string>(argv + 2, argv + argc));
    }
    // Every thread inherits this mask, so only the main thread's sigwait sees the stop signals.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

    bai::daemon::Options options;
    try {
        options = bai::daemon::parse_options(std::vector<std::string>(argv + 1, argv + argc));
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "batchai-emulator: %s\n", e.what());
        return bai::daemon::kExitCannotStart;
    }
    if (options.show_help) {
        std::fputs(bai::daemon::usage().c_str(), stdout);
        return 0;
    }
    if (options.show_version) {
        std::printf("batchai-emulator %s\n", bai::kVersion);
        return 0;
    }
    return bai::daemon::run(options);
}
