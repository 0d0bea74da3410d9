#include "tools/bai/status_command.h"

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "tools/bai/http_client.h"

namespace bai::cli {
namespace {

using namespace std::chrono_literals;

struct Probe {
    bool up = false;
    std::string detail;  // version or error
    double milliseconds = 0;
};

Probe probe_health(const std::string& base_url, const std::string& ca_cert) {
    Probe probe;
    auto started = std::chrono::steady_clock::now();
    try {
        auto client = make_client(base_url, ca_cert, 2s);
        httplib::Result result = client->Get("/health");
        probe.milliseconds = std::chrono::duration<double, std::milli>(
                                 std::chrono::steady_clock::now() - started)
                                 .count();
        if (!result) {
            probe.detail = httplib::to_string(result.error());
            if (result.error() == httplib::Error::SSLServerVerification) {
                probe.detail += " (is " + ca_cert + " the emulator's ca_cert?)";
            }
        } else if (result->status != 200) {
            probe.detail = "answered HTTP " + std::to_string(result->status);
        } else {
            probe.up = true;
            auto body = nlohmann::json::parse(result->body, nullptr, false);
            if (body.is_object() && body.contains("version") && body["version"].is_string()) {
                probe.detail = body["version"].get<std::string>();
            }
        }
    } catch (const std::exception& e) {
        probe.detail = e.what();
    }
    return probe;
}

}  // namespace

int run_status(const TargetFlags& flags) {
    std::string reason;
    std::optional<Target> target = resolve_target(flags, reason);
    if (!target) {
        std::fprintf(stderr, "bai: %s\n", reason.c_str());
        return 1;
    }
    endpoints::Endpoints& e = target->endpoints;
    Probe arm = probe_health(e.arm, e.ca_cert);
    if (!target->from_file && arm.up) discover_storage_endpoints(e);

    struct Row {
        const char* name;
        std::string url;
        Probe probe;
    };
    std::vector<Row> rows = {{"arm", e.arm, arm}};
    if (!e.blob.empty()) rows.push_back({"blob", e.blob, probe_health(e.blob, "")});
    if (!e.file.empty()) rows.push_back({"file", e.file, probe_health(e.file, "")});
    if (!e.batch.empty()) rows.push_back({"batch", e.batch, probe_health(e.batch, "")});

    bool all_up = true;
    bool any_up = false;
    std::printf("endpoints from %s\n", target->source.c_str());
    for (const Row& row : rows) {
        all_up = all_up && row.probe.up;
        any_up = any_up || row.probe.up;
        if (row.probe.up) {
            std::printf("  %-5s %-28s up (%.1f ms)%s%s\n", row.name, row.url.c_str(),
                        row.probe.milliseconds, row.probe.detail.empty() ? "" : ", version ",
                        row.probe.detail.c_str());
        } else {
            std::printf("  %-5s %-28s DOWN: %s\n", row.name, row.url.c_str(),
                        row.probe.detail.c_str());
        }
    }
    if (!any_up) {
        std::fprintf(stderr, "bai: the emulator is not running: nothing answers at %s%s\n",
                     e.arm.c_str(),
                     target->from_file ? " (the endpoints file is left from an earlier run)" : "");
        return 1;
    }
    if (!all_up) {
        std::fprintf(stderr, "bai: some endpoints of the emulator do not answer\n");
        return 1;
    }
    return 0;
}

}  // namespace bai::cli
