// libFuzzer: the proxy front door's reading of a CONNECT target or an absolute URL's authority, and
// the routing of the host it names. Every name routed to a service must be one that the proxy's
// CA may sign (else the tunnel would be opened with no certificate to serve), in lower case, with
// an account name of the cloud's shape where the service takes one.
#include <cstddef>
#include <cstdint>
#include <string>

#include "emulator/proxy/azure_hosts.h"
#include "emulator/proxy/proxy_ca.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    for (int default_port : {0, 80}) {
        std::optional<bai::proxy::Authority> authority = bai::proxy::parse_authority(text, default_port);
        if (!authority) continue;
        if (authority->host.empty() || authority->port < 1 || authority->port > 65535) __builtin_trap();
        const bai::proxy::AzureHost host = bai::proxy::classify_host(authority->host);
        if (host.service == bai::proxy::AzureService::none) {
            if (host.refusal.empty()) __builtin_trap();
            continue;
        }
        if (!bai::proxy::ca_may_sign(host.host)) __builtin_trap();
        for (char c : host.host) {
            if (c >= 'A' && c <= 'Z') __builtin_trap();
        }
        const bool has_account = host.service == bai::proxy::AzureService::blob ||
                                 host.service == bai::proxy::AzureService::file ||
                                 host.service == bai::proxy::AzureService::batch;
        if (has_account && (host.account.size() < 3 || host.account.size() > 24)) __builtin_trap();
    }
    // The host alone, as a request's Host or a tunnel's name.
    const bai::proxy::AzureHost direct = bai::proxy::classify_host(text);
    if (direct.service != bai::proxy::AzureService::none && !bai::proxy::ca_may_sign(direct.host)) __builtin_trap();
    return 0;
}
