#include "emulator/validation/swagger_definitions.h"

#include "emulator/validation/embedded_spec.h"

namespace bai::validation {

const nlohmann::json& definitions(ApiVersion version) {
    static const nlohmann::json stable = nlohmann::json::parse(kSpec2018_05_01)["definitions"];
    static const nlohmann::json preview =
        nlohmann::json::parse(kSpec2017_09_01_preview)["definitions"];
    static const nlohmann::json march_2018 = nlohmann::json::parse(kSpec2018_03_01)["definitions"];
    switch (version) {
        case ApiVersion::v2018_05_01: return stable;
        case ApiVersion::v2018_03_01: return march_2018;
        case ApiVersion::v2017_09_01_preview: break;
    }
    return preview;
}

}  // namespace bai::validation
