// The official Microsoft.BatchAI swagger definitions of both API versions, compiled in (see
// spec/), parsed once.
#pragma once

#include <nlohmann/json.hpp>

namespace bai::validation {

enum class ApiVersion { v2018_05_01, v2017_09_01_preview, v2018_03_01 };

// {"DefinitionName": {swagger schema}, ...}
const nlohmann::json& definitions(ApiVersion version);

}  // namespace bai::validation
