// What a bai command reports when it cannot do what was asked: a message for stderr and the
// process's exit status (1: failed; 2: bad usage; 3: a resource that is not there, as az does).
#pragma once

#include <stdexcept>
#include <string>

namespace bai::cli {

struct CliError : std::runtime_error {
    explicit CliError(const std::string& message, int exit_code = 1)
        : std::runtime_error(message), exit_code(exit_code) {}
    int exit_code;
};

inline constexpr int kExitUsage = 2;
inline constexpr int kExitNotFound = 3;

}  // namespace bai::cli
