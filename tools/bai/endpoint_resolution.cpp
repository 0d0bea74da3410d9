#include "tools/bai/endpoint_resolution.h"

#include <chrono>
#include <stdexcept>

#include "common/endpoints/user_pointer.h"
#include "common/env/variables.h"
#include "tools/bai/http_client.h"

namespace bai::cli {
namespace {

namespace fs = std::filesystem;

// A connection refused comes back at once; the timeout bounds a port that something else holds.
bool health_answers(const std::string& arm) {
    try {
        httplib::Result result = make_client(arm, "", std::chrono::milliseconds(700))->Get("/health");
        return result && result->status == 200;
    } catch (const std::exception&) {
        return false;
    }
}

constexpr const char* kHowToStart = "start it with tools/run, or pass --data-dir DIR or --endpoint URL";

// The endpoints file in `dir` of a running emulator; nullopt (and why, in `passed_over`) when
// there is none or its process is gone. A malformed file is passed over too: it is not the user's.
std::optional<endpoints::Endpoints> live_endpoints(const fs::path& file, std::string& passed_over) {
    try {
        std::optional<endpoints::Endpoints> found = endpoints::read(file);
        if (!found) return std::nullopt;
        if (!endpoints::process_alive(found->pid)) {
            passed_over += "; " + file.string() + " is left from an earlier run (pid " + std::to_string(found->pid) + " is gone)";
            return std::nullopt;
        }
        return found;
    } catch (const std::exception& e) {
        passed_over += "; " + std::string(e.what());
        return std::nullopt;
    }
}

}  // namespace

Surroundings actual_surroundings() {
    return Surroundings{.pointers = endpoints::pointer_candidates(), .answers = health_answers};
}

std::optional<Target> resolve_target(const TargetFlags& flags, std::string& reason, const Surroundings& around) {
    Target target;
    std::optional<std::string> endpoint = flags.endpoint;
    if (!endpoint && !flags.location) endpoint = env::variable("BATCHAI_EMULATOR_ENDPOINT");

    if (endpoint) {
        target.endpoints.arm = *endpoint;
        while (target.endpoints.arm.ends_with('/')) target.endpoints.arm.pop_back();
        target.source = flags.endpoint ? "--endpoint" : "$BATCHAI_EMULATOR_ENDPOINT";
    } else if (flags.location) {
        // Named by the user: its file, stale or not, is the answer (status says when it is stale).
        fs::path file = *flags.location / endpoints::kFileName;
        std::optional<endpoints::Endpoints> found;
        try {
            found = endpoints::read(file);
        } catch (const std::runtime_error& e) {
            reason = e.what();
            return std::nullopt;
        }
        if (!found) {
            reason = "the emulator is not running: no " + file.string() + " (" + kHowToStart + ")";
            return std::nullopt;
        }
        target.endpoints = *found;
        target.source = file.string();
        target.from_file = true;
    } else {
        std::string passed_over;
        const fs::path here = around.working_data_dir / endpoints::kFileName;
        if (auto found = live_endpoints(here, passed_over)) {
            target.endpoints = *found;
            target.source = here.string();
            target.from_file = true;
        } else {
            for (const fs::path& pointer : around.pointers) {
                auto pointed = live_endpoints(pointer, passed_over);
                if (!pointed) continue;
                std::error_code ec;
                const fs::path file = fs::read_symlink(pointer, ec);
                target.endpoints = *pointed;
                target.source = ec ? pointer.string() : file.string() + " (through " + pointer.string() + ")";
                target.from_file = true;
                break;
            }
        }
        if (!target.from_file) {
            if (!around.answers || !around.answers(around.default_arm)) {
                reason = "the emulator is not running: no " + here.string() +
                         (around.pointers.empty() ? "" : ", no pointer to a running one") + ", nothing answers at " +
                         around.default_arm + passed_over + " (" + kHowToStart + ")";
                return std::nullopt;
            }
            target.endpoints.arm = around.default_arm;
            target.source = "the default endpoint " + around.default_arm;
        }
    }
    if (flags.ca_cert) {
        target.endpoints.ca_cert = *flags.ca_cert;
    } else if (auto ca = env::variable("BATCHAI_EMULATOR_CA_CERT")) {
        target.endpoints.ca_cert = *ca;
    }
    return target;
}

}  // namespace bai::cli
