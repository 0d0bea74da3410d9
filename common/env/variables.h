// Reading the process's environment.
#pragma once

#include <optional>
#include <string>

namespace bai::env {

// The variable's value; nullopt when it is unset or empty (an empty value is no value, as a
// shell's ${NAME:-default} reads it).
std::optional<std::string> variable(const char* name);

}  // namespace bai::env
