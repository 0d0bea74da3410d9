// `batchai-emulator replay FILE... [--seed N] [--trace OUT] [--data-dir DIR] [--real-timeout S]`:
// replays scenario files, prints one line per file (PASS or FAIL with the step, the trace's tail
// and the command that replays it), writes the traces to OUT. Exit 0 when every file passes, 1
// when one fails, 2 for a bad command line or a bad scenario file.
#pragma once

#include <string>
#include <vector>

namespace bai::scenarios {

int replay_command(const std::vector<std::string>& args);

}  // namespace bai::scenarios
