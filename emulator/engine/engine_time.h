// The engine's "now" as the documents write times (ISO 8601, milliseconds, Z).
#pragma once

#include <string>

#include "emulator/arm/resource_view.h"
#include "emulator/engine/clock.h"

namespace bai::engine {

inline std::string now_text(const Clock& clock) { return arm::arm_time(clock.now()); }

}  // namespace bai::engine
