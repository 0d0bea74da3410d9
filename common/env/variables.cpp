#include "common/env/variables.h"

#include <cstdlib>

namespace bai::env {

std::optional<std::string> variable(const char* name) {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0') return std::nullopt;
    return std::string(value);
}

}  // namespace bai::env
