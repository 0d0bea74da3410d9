// batchai-emulator's life: lock the data directory, open the state, serve the three endpoints
// until SIGTERM or SIGINT, then stop cleanly.
#pragma once

#include "emulator/daemon/options.h"

namespace bai::daemon {

// Exit codes: 0 after a clean stop, 2 when the emulator cannot start (data directory in use, a
// port taken, unusable state); the reason is printed as one line on stderr.
inline constexpr int kExitCannotStart = 2;

// Must be called from the main thread with SIGTERM and SIGINT blocked in every thread.
int run(const Options& options);

}  // namespace bai::daemon
