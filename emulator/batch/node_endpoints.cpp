#include "emulator/batch/node_endpoints.h"

#include "common/text/ascii.h"
#include "emulator/batch/pool_rules.h"

namespace bai::batch {

using nlohmann::json;

namespace {

constexpr const char* kPublicAddress = "127.0.0.1";
constexpr const char* kPublicName = "localhost";
constexpr int kFirstLoginPort = 50000;

// NAME.N (not "NAME." + ...: GCC 12 warns of a restrict overlap in such short concatenations
// that has none).
std::string numbered(std::string name, int number) {
    name.append(".").append(std::to_string(number));
    return name;
}

json endpoint(const std::string& name, const std::string& protocol, int frontend, int backend) {
    return {{"name", name}, {"protocol", protocol}, {"publicIPAddress", kPublicAddress}, {"publicFQDN", kPublicName},
            {"frontendPort", frontend}, {"backendPort", backend}};
}

}  // namespace

json node_endpoints(const json& pool, int number) {
    json endpoints = json::array();
    if (pool.contains("cloudServiceConfiguration")) {
        endpoints.push_back({{"name", "Microsoft.WindowsAzure.Plugins.RemoteForwarder.RdpInput"}, {"protocol", "tcp"},
                             {"frontendPort", 3389}, {"backendPort", 20000}});
        return {{"inboundEndpoints", endpoints}};
    }
    const json nat = pool.value("networkConfiguration", json::object()).value("endpointConfiguration", json::object())
                         .value("inboundNATPools", json::array());
    for (const json& rule : nat.is_array() ? nat : json::array()) {
        if (!rule.is_object()) continue;
        endpoints.push_back(endpoint(numbered(rule.value("name", ""), number), text::lower(rule.value("protocol", "tcp")),
                                     rule.value("frontendPortRangeStart", 0) + number, rule.value("backendPort", 0)));
    }
    if (is_windows_pool(pool)) {
        endpoints.push_back(endpoint(numbered("RDPRule", number), "tcp", kFirstLoginPort + number, 3389));
    } else {
        endpoints.push_back(endpoint(numbered("SSHRule", number), "tcp", kFirstLoginPort + number, 22));
    }
    return {{"inboundEndpoints", endpoints}};
}

std::optional<json> remote_login_settings(const json& pool, int number) {
    if (pool.contains("cloudServiceConfiguration")) return std::nullopt;
    return json{{"remoteLoginIPAddress", kPublicAddress}, {"remoteLoginPort", kFirstLoginPort + number}};
}

std::optional<std::string> rdp_file(const json& pool, int number) {
    if (!is_windows_pool(pool)) return std::nullopt;
    std::string file = "full address:s:";
    file.append(kPublicAddress);
    if (!pool.contains("cloudServiceConfiguration")) file.append(":").append(std::to_string(kFirstLoginPort + number));
    file.append("\r\nLoadBalanceInfo:s:Cookie: mstshash=TVM#TVM_IN_").append(std::to_string(number));
    return file;
}

}  // namespace bai::batch
