// The emulator's sign-in service (an ADFS-style authority on the ARM endpoint, which is what the az
// CLI's and the SDKs' sign-in library can reach without the public cloud): OpenID configuration,
// the token endpoint's client credentials grant, and the signing keys. Tokens are JWTs signed with
// the emulator's key, with the claims the cloud's carry (aud, iss, iat, nbf, exp, appid, oid, sub,
// tid, idtyp, ver).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/http/routes.h"
#include "emulator/identity/service_principals.h"
#include "emulator/identity/signing_key.h"

namespace bai::identity {

// A refusal as the sign-in service words it: {"error", "error_description" starting with the
// AADSTS code, "error_codes", "timestamp", "trace_id", "correlation_id"}.
struct SignInError {
    int status;
    std::string error;
    int code;
    std::string description;
};

// Throws SignInError 400 invalid_tenant for a tenant other than the emulator's ("adfs", its id,
// "organizations", "common" or its domain name).
void require_known_tenant(const std::string& tenant);

// The fields of an application/x-www-form-urlencoded body (the first of a repeated name counts).
// Throws SignInError 400 invalid_request for a malformed escape or a field that is not UTF-8.
std::map<std::string, std::string> parse_form(const std::string& body);

// What a check of a bearer token found.
enum class TokenCheck { valid, invalid, expired, wrong_audience };
struct TokenVerdict {
    TokenCheck check = TokenCheck::invalid;
    nlohmann::json claims;  // when the signature held: the token's claims
};

// The public cloud's sign-in authority, as the proxy front door serves it.
inline constexpr const char* kPublicAuthority = "https://login.microsoftonline.com";

class TokenService {
public:
    static constexpr std::chrono::seconds kLifetime{3599};

    TokenService(SigningKey key, ServicePrincipals principals);
    // The key from `make_key`, called once, when a token is first signed or checked or the keys
    // are first asked for: making an RSA key takes a few hundred ms, and most runs of the
    // emulator (a replay, a test) never sign in.
    TokenService(std::function<SigningKey()> make_key, ServicePrincipals principals);

    // The OpenID configuration of `tenant` ("adfs", the tenant id, "organizations" or "common") at
    // `base` (the authority's URL), v1's or (`v2`) v2.0's endpoints. Throws SignInError for another tenant.
    nlohmann::json openid_configuration(const std::string& base, const std::string& tenant, bool v2 = false) const;
    nlohmann::json keys() const;
    // The token endpoint: `form` is the request's form fields: a service principal's client
    // credentials, or a user's device code or refresh token (user_sign_in.h). Throws SignInError.
    nlohmann::json grant(const std::string& base, const std::string& tenant,
                         const std::map<std::string, std::string>& form) const;
    // A token for `principal` and `audience`, as grant() issues it (for tests and tools).
    std::string issue(const std::string& base, const std::string& tenant, const ServicePrincipal& principal,
                      const std::string& audience, std::chrono::system_clock::time_point now) const;

    // The device-code flow and refresh tokens sign in the well-known user with no secret: refused
    // under --strict-auth, where only service principals with their credentials get tokens.
    void refuse_user_sign_in() { users_sign_in_ = false; }
    bool users_sign_in() const { return users_sign_in_; }

    // `claims` as a JWT signed with the service's key (RS256, its key id in the header).
    std::string sign(const nlohmann::json& claims) const;

    // Whether `token` is one of this service's (RS256 with its key: no other algorithm), not
    // expired (nor used before its nbf; five minutes' leeway, as the cloud allows), for one of
    // `audiences`.
    TokenVerdict verify(const std::string& token, const std::vector<std::string>& audiences) const;

private:
    const SigningKey& key() const;

    std::function<SigningKey()> make_key_;
    // Made under the mutex when first asked for; a failure (a full disk) leaves it to be tried
    // again by the next request.
    mutable std::mutex key_mutex_;
    mutable std::optional<SigningKey> key_;
    ServicePrincipals principals_;
    bool users_sign_in_ = true;
};

// The audiences of the service's own flow tokens (a device code, a refresh token) start so: no
// client may ask for a token for them.
inline constexpr const char* kOwnAudiencePrefix = "urn:batchai-emulator:";

// GET /{tenant}/.well-known/openid-configuration (and /{tenant}/v2.0/...), POST
// /{tenant}/oauth2/token and /{tenant}/oauth2/v2.0/token, POST /{tenant}/oauth2/devicecode (and
// v2.0's), GET /{tenant}/discovery/keys (and /discovery/v2.0/keys), GET /common/discovery/instance
// (MSAL's instance discovery): no bearer token needed. `base` is the authority's URL (the ARM
// endpoint's, or the public cloud's through the proxy front door).
void add_identity_routes(http::Routes& routes, const TokenService& service, const std::string& base);

}  // namespace bai::identity
