#include "tools/bai/endpoint_resolution.h"

#include <cstdlib>
#include <stdexcept>

namespace bai::cli {
namespace {

std::optional<std::string> env(const char* name) {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0') return std::nullopt;
    return std::string(value);
}

}  // namespace

std::optional<Target> resolve_target(const TargetFlags& flags, std::string& reason) {
    Target target;
    std::optional<std::string> endpoint = flags.endpoint;
    if (!endpoint && !flags.location) endpoint = env("BATCHAI_EMULATOR_ENDPOINT");

    if (endpoint) {
        target.endpoints.arm = *endpoint;
        while (target.endpoints.arm.ends_with('/')) target.endpoints.arm.pop_back();
        target.source = flags.endpoint ? "--endpoint" : "$BATCHAI_EMULATOR_ENDPOINT";
    } else {
        std::filesystem::path dir = flags.location.value_or("batchai-data");
        std::filesystem::path file = dir / endpoints::kFileName;
        std::optional<endpoints::Endpoints> found;
        try {
            found = endpoints::read(file);
        } catch (const std::runtime_error& e) {
            reason = e.what();
            return std::nullopt;
        }
        if (!found) {
            reason = "the emulator is not running: no " + file.string() +
                     " (start it with tools/run, or pass --data-dir DIR or --endpoint URL)";
            return std::nullopt;
        }
        target.endpoints = *found;
        target.source = file.string();
        target.from_file = true;
    }
    if (flags.ca_cert) {
        target.endpoints.ca_cert = *flags.ca_cert;
    } else if (auto ca = env("BATCHAI_EMULATOR_CA_CERT")) {
        target.endpoints.ca_cert = *ca;
    }
    return target;
}

}  // namespace bai::cli
