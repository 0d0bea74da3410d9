#include "emulator/node_login/login_rules.h"

#include <arpa/inet.h>
#include <libssh/libssh.h>

#include <cstring>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/crypto/digest.h"
#include "common/http/loopback.h"

namespace bai::node_login {

namespace {

// Nothing equals an empty expectation (an account without a password takes none).
bool same_text(const std::string& given, const std::string& expected) {
    return !expected.empty() && crypto::same_secret(given, expected);
}

// One authorized_keys line without options: "TYPE BASE64 [comment]".
bool line_matches(const std::string& line, const ssh_key_struct* offered) {
    std::istringstream words(line);
    std::string type, blob;
    if (!(words >> type >> blob)) return false;
    const ssh_keytypes_e kind = ssh_key_type_from_name(type.c_str());
    if (kind == SSH_KEYTYPE_UNKNOWN) return false;
    ssh_key key = nullptr;
    if (ssh_pki_import_pubkey_base64(blob.c_str(), kind, &key) != SSH_OK || !key) return false;
    const bool same = ssh_key_cmp(key, const_cast<ssh_key>(offered), SSH_KEY_CMP_PUBLIC) == 0;
    ssh_key_free(key);
    return same;
}

}  // namespace

bool password_accepted(const AdminAccount& admin, const std::string& user, const std::string& password) {
    const bool user_ok = same_text(user, admin.user);
    const bool password_ok = same_text(password, admin.password);
    return user_ok && password_ok;
}

bool key_accepted(const AdminAccount& admin, const std::string& user, const ssh_key_struct* offered) {
    if (!offered || admin.public_key.empty() || !same_text(user, admin.user)) return false;
    std::istringstream lines(admin.public_key);
    for (std::string line; std::getline(lines, line);) {
        if (line_matches(line, offered)) return true;
    }
    return false;
}

std::optional<ForwardTarget> forward_target(const std::string& host, int port) {
    if (port < 1 || port > 65535 || !http::is_loopback_host(host)) return std::nullopt;
    ForwardTarget target;
    if (host == "::1") {
        auto* six = reinterpret_cast<sockaddr_in6*>(&target.address);
        six->sin6_family = AF_INET6;
        six->sin6_addr = in6addr_loopback;
        six->sin6_port = htons(static_cast<uint16_t>(port));
        target.size = sizeof(sockaddr_in6);
        return target;
    }
    auto* four = reinterpret_cast<sockaddr_in*>(&target.address);
    four->sin_family = AF_INET;
    four->sin_port = htons(static_cast<uint16_t>(port));
    if (inet_pton(AF_INET, host == "localhost" ? "127.0.0.1" : host.c_str(), &four->sin_addr) != 1) return std::nullopt;
    target.size = sizeof(sockaddr_in);
    return target;
}

std::string logged(const std::string& chosen) {
    constexpr size_t kShown = 64;
    const std::string cut = chosen.size() > kShown ? chosen.substr(0, kShown) + "..." : chosen;
    return nlohmann::json(cut).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace bai::node_login
