// The emulator's services, started and stopped as one object: the data directory's lock and
// state, the storage engines and their Blob and File endpoints, the ARM API, the job engine.
// `batchai-emulator` starts one and waits for a signal; a scenario replay starts one in-process
// with a virtual clock and its declared workloads.
#pragma once

#include <httplib.h>

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string_view>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/endpoints/endpoints_file.h"
#include "emulator/daemon/options.h"

namespace bai::engine {
class Clock;
class DeclaredWorkloads;
class LocalEngine;
}  // namespace bai::engine

namespace bai::storage {
class RequestFaults;
}  // namespace bai::storage

namespace bai::daemon {

// Why the emulator cannot start (data directory in use, a port taken, unusable state).
struct StartError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct EngineHooks {
    engine::Clock* clock = nullptr;                  // a real clock when null
    engine::DeclaredWorkloads* workloads = nullptr;  // none when null
    // Scenarios: the engine's events, and every write of an ARM document (type, body).
    std::function<void(const std::string& actor, const std::string& event)> trace;
    std::function<void(std::string_view type, const nlohmann::json& body)> observe;
    // Faults injected into the Blob and File endpoints (none when null).
    storage::RequestFaults* blob_faults = nullptr;
    storage::RequestFaults* file_faults = nullptr;
};

class RunningEmulator {
public:
    // Throws StartError. On return every endpoint answers and DIR/endpoints.json is written.
    static std::unique_ptr<RunningEmulator> start(const Options& options, EngineHooks hooks = {});
    ~RunningEmulator();

    const endpoints::Endpoints& endpoints() const;
    const std::filesystem::path& location() const;
    engine::LocalEngine& engine();
    // No ARM operation waits to complete (a replay settles on it and on the clock).
    bool operations_idle() const;
    // Waits until operations_idle() or `until`; whether idle.
    bool wait_operations_idle(std::chrono::steady_clock::time_point until) const;
    // Answers an ARM request without a socket (a replay's), as the ARM endpoint answers one
    // sent to it over TLS: request.target as sent (path and query); Host (the endpoint's) and
    // Content-Length are set here where the request has none, the path and query parsed as the
    // endpoint parses them.
    httplib::Response answer_arm(httplib::Request request);
    // The connection string of devstoreaccount1 on this emulator's endpoints.
    std::string dev_connection_string() const;

    // Stops accepting, finishes requests (2 s at most), stops the ARM worker and the job engine,
    // releases the mounts, records a clean stop. Idempotent.
    void stop();

    struct Parts;

private:
    explicit RunningEmulator(std::unique_ptr<Parts> parts);
    std::unique_ptr<Parts> parts_;
};

}  // namespace bai::daemon
