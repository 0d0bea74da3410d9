// Where bai finds the emulator: the flags, the environment, ./batchai-data, the user's pointer to a
// running emulator, and at last the default loopback endpoint.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

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

// What resolution looks at beyond the flags and the environment (the tests replace it).
struct Surroundings {
    std::filesystem::path working_data_dir = "batchai-data";
    std::vector<std::filesystem::path> pointers;  // endpoints::pointer_candidates()
    std::string default_arm = "https://127.0.0.1:10443";
    // Whether an emulator answers /health at this ARM URL (quickly: nothing may be there).
    std::function<bool(const std::string& arm)> answers;
};
Surroundings actual_surroundings();

// Order: --endpoint, --data-dir DIR, $BATCHAI_EMULATOR_ENDPOINT (a flag wins over the
// environment), ./batchai-data/endpoints.json, the user's pointer (common/endpoints/user_pointer.h),
// the default ARM endpoint if it answers. An endpoints file whose process is gone is passed over
// (but for --data-dir's). The CA certificate: --ca-cert, $BATCHAI_EMULATOR_CA_CERT, endpoints.json's
// ca_cert (none for the default endpoint: loopback HTTPS is then not verified). Returns nullopt
// with `reason` set when no emulator is found; it suggests tools/run.
std::optional<Target> resolve_target(const TargetFlags& flags, std::string& reason,
                                     const Surroundings& around = actual_surroundings());

}  // namespace bai::cli
