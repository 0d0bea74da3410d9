#include "emulator/validation/swagger_definitions.h"

#include "emulator/validation/embedded_spec.h"

namespace bai::validation {

const nlohmann::json& definitions(ApiVersion version) {
    static const nlohmann::json stable = nlohmann::json::parse(kSpec2018_05_01)["definitions"];
    static const nlohmann::json preview =
        nlohmann::json::parse(kSpec2017_09_01_preview)["definitions"];
    return version == ApiVersion::v2018_05_01 ? stable : preview;
}

}  // namespace bai::validation
