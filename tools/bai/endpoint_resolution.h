// Where bai finds the emulator: --endpoint, $BATCHAI_EMULATOR_ENDPOINT, or DIR/endpoints.json.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "common/endpoints/endpoints_file.h"

namespace bai::cli {

struct Target {
    // The ARM endpoint always; blob/file when known before contacting the emulator.
    endpoints::Endpoints endpoints;
    // Where the endpoints came from, for messages ("--endpoint", "/path/endpoints.json").
    std::string source;
    bool from_file = false;
};

struct TargetFlags {
    std::optional<std::string> endpoint;
    std::optional<std::filesystem::path> location;
    std::optional<std::string> ca_cert;
};

// Order: --endpoint, --data-dir DIR, $BATCHAI_EMULATOR_ENDPOINT, ./batchai-data (a flag wins
// over the environment). The CA
// certificate: --ca-cert, $BATCHAI_EMULATOR_CA_CERT, endpoints.json's ca_cert. Returns nullopt
// with `reason` set when nothing says where the emulator is (no endpoints.json: not running).
std::optional<Target> resolve_target(const TargetFlags& flags, std::string& reason);

}  // namespace bai::cli
