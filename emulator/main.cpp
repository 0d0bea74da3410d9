#include <signal.h>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/version.h"
#include "emulator/daemon/daemon.h"
#include "emulator/daemon/options.h"
#include "scenarios/replay/replay_command.h"

int main(int argc, char** argv) {
    signal(SIGPIPE, SIG_IGN);
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
