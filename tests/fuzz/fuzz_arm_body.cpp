// libFuzzer: an ARM request body through what a PUT does with it: the size, content-type and
// depth checks, the JSON parser, the validator of the kind and API version the first byte picks,
// and, when it passes, the server-filled defaults of either era; the body also as a virtual
// network's, as a preview list's $filter and $select, over a small document.
#include <cstddef>
#include <cstdint>
#include <string>

#include "emulator/arm/arm_request.h"
#include "emulator/arm/cloud_error.h"
#include "emulator/arm/odata_filter.h"
#include "emulator/arm/resource_defaults.h"
#include "emulator/arm/resource_ids.h"
#include "emulator/arm/resource_view.h"
#include "emulator/arm/virtual_networks.h"

namespace {

using bai::validation::ApiVersion;
using bai::validation::ResourceKind;

constexpr ResourceKind kKinds[] = {ResourceKind::job, ResourceKind::cluster, ResourceKind::file_server,
                                   ResourceKind::workspace, ResourceKind::cluster_update,
                                   ResourceKind::workspace_update};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const ResourceKind kind = kKinds[data[0] % 6];
    constexpr ApiVersion kVersions[] = {ApiVersion::v2018_05_01, ApiVersion::v2017_09_01_preview, ApiVersion::v2018_03_01};
    const ApiVersion version = kVersions[(data[0] / 6) % 3];
    httplib::Request http;
    http.method = "PUT";
    http.body.assign(reinterpret_cast<const char*>(data) + 1, size - 1);
    http.headers.emplace("Content-Type", "application/json");
    bai::arm::ArmRequest request = bai::arm::make_request(http, "https://127.0.0.1:1");
    try {
        nlohmann::json body = request.json_body().value_or(nlohmann::json::object());
        bai::arm::check_body(body, kind, version);
        nlohmann::json properties = body.value("properties", nlohmann::json::object());
        bai::arm::stamp_new(properties, "creating");
        const auto era = version == ApiVersion::v2018_05_01 ? bai::arm::Era::latest : bai::arm::Era::early_2018;
        if (kind == ResourceKind::job) bai::arm::fill_job_defaults(properties, "segment", era);
        if (kind == ResourceKind::cluster) {
            bai::arm::check_cluster_image(properties);
            bai::arm::fill_cluster_defaults(properties, "suffix", era);
        }
        if (kind == ResourceKind::file_server) {
            bai::arm::fill_file_server_defaults(properties, "127.0.2.1", "/data", "00000000-0000-0000-0000-000000000000");
        }
        (void)bai::arm::tool_type(properties).size();
    } catch (const bai::arm::CloudError& e) {
        httplib::Response res;
        bai::arm::send_json(res, e.status(), e.body());
    }
    try {
        nlohmann::json body = request.json_body().value_or(nlohmann::json::object());
        (void)bai::arm::check_network_body(body, "/subscriptions/s/resourceGroups/g/providers/Microsoft.Network/virtualNetworks/n");
    } catch (const bai::arm::CloudError&) {
    }
    static const nlohmann::json document = {{"id", "/s/j"}, {"name", "j"}, {"properties", {{"priority", 3}, {"state", "queued"}}}};
    try {
        (void)bai::arm::parse_odata_filter(http.body)(document);
    } catch (const bai::arm::FilterError&) {
    }
    try {
        (void)bai::arm::select_paths(document, http.body);
    } catch (const bai::arm::FilterError&) {
    }
    return 0;
}
