#include "emulator/identity/service_principals.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <stdexcept>

#include "common/crypto/digest.h"
#include "common/text/ascii.h"

namespace bai::identity {

bool is_guid(const std::string& text) {
    if (text.size() != 36) return false;
    for (size_t i = 0; i < text.size(); ++i) {
        const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? text[i] != '-' : !std::isxdigit(static_cast<unsigned char>(text[i]))) return false;
    }
    return true;
}

namespace {

// ID:REST, the id a GUID and REST not empty (`what` names REST in the messages).
std::pair<std::string, std::string> split_flag(const std::string& flag, const std::string& text, const std::string& what) {
    const size_t colon = text.find(':');
    if (colon == std::string::npos) throw std::invalid_argument(flag + " wants ID:" + what + ", got '" + text + "'");
    std::string id = text.substr(0, colon);
    std::string rest = text.substr(colon + 1);
    if (!is_guid(id)) throw std::invalid_argument(flag + ": the client id must be a GUID, got '" + id + "'");
    if (rest.empty()) throw std::invalid_argument(flag + ": the " + text::lower(what) + " of " + id + " is empty");
    return {std::move(id), std::move(rest)};
}

}  // namespace

ServicePrincipal parse_service_principal(const std::string& text) {
    auto [id, secret] = split_flag("--service-principal", text, "SECRET");
    return {std::move(id), std::move(secret), std::nullopt};
}

ServicePrincipal parse_service_principal_certificate(const std::string& text) {
    auto [id, path] = split_flag("--service-principal-cert", text, "PEM_FILE");
    try {
        return {std::move(id), "", load_client_certificate(path)};
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(std::string("--service-principal-cert: ") + e.what());
    }
}

ServicePrincipals::ServicePrincipals(const std::vector<ServicePrincipal>& more) {
    all_.push_back({kWellKnownClientId, kWellKnownClientSecret, std::nullopt});
    for (const ServicePrincipal& p : more) {
        auto same = std::find_if(all_.begin(), all_.end(),
                                 [&](const ServicePrincipal& q) { return text::iequals(q.client_id, p.client_id); });
        if (same == all_.end()) {
            all_.push_back(p);
            continue;
        }
        if (!p.secret.empty()) same->secret = p.secret;
        if (p.certificate) same->certificate = p.certificate;
    }
}

std::optional<ServicePrincipal> ServicePrincipals::find(const std::string& client_id) const {
    for (const ServicePrincipal& p : all_) {
        if (text::iequals(p.client_id, client_id)) return p;
    }
    return std::nullopt;
}

std::string object_id_of(const std::string& client_id) {
    std::string hash = crypto::sha256("service-principal-object-id:" + text::lower(client_id));
    auto* digest = reinterpret_cast<unsigned char*>(hash.data());
    digest[6] = static_cast<unsigned char>((digest[6] & 0x0f) | 0x80);  // version 8: name-based, custom
    digest[8] = static_cast<unsigned char>((digest[8] & 0x3f) | 0x80);  // RFC 4122 variant
    char out[37];
    std::snprintf(out, sizeof out, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", digest[0],
                  digest[1], digest[2], digest[3], digest[4], digest[5], digest[6], digest[7], digest[8], digest[9],
                  digest[10], digest[11], digest[12], digest[13], digest[14], digest[15]);
    return out;
}

}  // namespace bai::identity
