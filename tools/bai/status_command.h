// bai status: is each endpoint of the emulator answering?
#pragma once

#include "tools/bai/endpoint_resolution.h"

namespace bai::cli {

// Prints one line per endpoint; 0 when all answer, 1 otherwise (with the reason on stderr).
int run_status(const TargetFlags& flags);

}  // namespace bai::cli
