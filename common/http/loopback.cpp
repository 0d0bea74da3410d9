#include "common/http/loopback.h"

#include <arpa/inet.h>

namespace bai::http {

bool is_loopback_host(const std::string& host) {
    if (host == "localhost" || host == "::1") return true;
    in_addr addr{};
    if (inet_pton(AF_INET, host.c_str(), &addr) != 1) return false;
    return (ntohl(addr.s_addr) >> 24) == 127;
}

}  // namespace bai::http
