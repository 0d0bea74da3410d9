#include "emulator/identity/token_service.h"

#include <openssl/crypto.h>

#include <algorithm>
#include <jwt/jwt.hpp>

#include "common/crypto/random_id.h"
#include "emulator/identity/jwt_guard.h"
#include "emulator/identity/user_sign_in.h"
#include "common/text/ascii.h"
#include "common/text/percent_encoding.h"
#include "common/text/utf8.h"
#include "common/time/timestamps.h"

namespace bai::identity {
namespace {

bool known_tenant(const std::string& tenant) {
    return text::iequals(tenant, "adfs") || text::iequals(tenant, kTenantId) || text::iequals(tenant, "organizations") ||
           text::iequals(tenant, "common") || text::iequals(tenant, kTenantDomain);
}

std::string issuer(const std::string& base, const std::string& tenant) {
    return text::iequals(tenant, "adfs") ? base + "/adfs" : base + "/" + std::string(kTenantId) + "/";
}

[[noreturn]] void refuse(int status, std::string error, int code, std::string description) {
    throw SignInError{status, std::move(error), code, std::move(description)};
}

}  // namespace

void require_known_tenant(const std::string& tenant) {
    if (!known_tenant(tenant)) {
        refuse(400, "invalid_tenant", 90002,
               "Tenant '" + tenant + "' not found. Check to make sure you have the correct tenant ID and are signing into "
               "the correct cloud.");
    }
}

std::map<std::string, std::string> parse_form(const std::string& body) {
    std::map<std::string, std::string> fields;
    size_t at = 0;
    while (at <= body.size()) {
        size_t amp = body.find('&', at);
        if (amp == std::string::npos) amp = body.size();
        std::string_view pair(body.data() + at, amp - at);
        if (!pair.empty()) {
            size_t eq = pair.find('=');
            auto name = text::percent_decode(pair.substr(0, eq), true);
            auto value = text::percent_decode(eq == std::string_view::npos ? "" : pair.substr(eq + 1), true);
            if (!name || !value || !text::is_valid_utf8(*name) || !text::is_valid_utf8(*value)) {
                refuse(400, "invalid_request", 900144, "The request body is not a valid form of UTF-8 fields.");
            }
            fields.emplace(*name, *value);  // the first of a repeated field counts
        }
        at = amp + 1;
    }
    return fields;
}

namespace {

nlohmann::json error_body(const SignInError& e) {
    const std::string trace = crypto::uuid4();
    const std::string correlation = crypto::uuid4();
    const std::string now = time::format_iso8601(time::now(), 0);
    return {{"error", e.error},
            {"error_description", "AADSTS" + std::to_string(e.code) + ": " + e.description + "\r\nTrace ID: " + trace +
                                      "\r\nCorrelation ID: " + correlation + "\r\nTimestamp: " + now},
            {"error_codes", {e.code}},
            {"timestamp", now},
            {"trace_id", trace},
            {"correlation_id", correlation},
            {"error_uri", "https://login.microsoftonline.com/error?code=" + std::to_string(e.code)}};
}

}  // namespace

TokenService::TokenService(SigningKey key, ServicePrincipals principals)
    : make_key_([key = std::move(key)] { return key; }), principals_(std::move(principals)) {}

TokenService::TokenService(std::function<SigningKey()> make_key, ServicePrincipals principals)
    : make_key_(std::move(make_key)), principals_(std::move(principals)) {}

const SigningKey& TokenService::key() const {
    std::lock_guard lock(key_mutex_);
    if (!key_) key_ = make_key_();
    return *key_;  // never replaced once made
}

nlohmann::json TokenService::openid_configuration(const std::string& base, const std::string& tenant, bool v2) const {
    require_known_tenant(tenant);
    const std::string root = base + "/" + tenant;
    if (v2) {  // as the cloud's v2.0 document names its endpoints
        const std::string v2_issuer = base + "/" + std::string(kTenantId) + "/v2.0";
        return {{"issuer", v2_issuer},
                {"token_endpoint", root + "/oauth2/v2.0/token"},
                {"authorization_endpoint", root + "/oauth2/v2.0/authorize"},
                {"device_authorization_endpoint", root + "/oauth2/v2.0/devicecode"},
                {"jwks_uri", root + "/discovery/v2.0/keys"},
                {"token_endpoint_auth_methods_supported", {"client_secret_post", "private_key_jwt", "client_secret_basic"}},
                {"response_types_supported", {"code", "id_token", "code id_token", "id_token token"}},
                {"grant_types_supported", {"client_credentials", kDeviceCodeGrant, "refresh_token"}},
                {"scopes_supported", {"openid", "profile", "email", "offline_access"}},
                {"subject_types_supported", {"pairwise"}},
                {"id_token_signing_alg_values_supported", {"RS256"}},
                {"tenant_region_scope", "WW"}};
    }
    return {{"issuer", issuer(base, tenant)},
            {"token_endpoint", root + "/oauth2/token"},
            {"authorization_endpoint", root + "/oauth2/authorize"},
            {"device_authorization_endpoint", root + "/oauth2/devicecode"},
            {"jwks_uri", root + "/discovery/keys"},
            {"token_endpoint_auth_methods_supported", {"client_secret_post", "client_secret_basic"}},
            {"response_types_supported", {"code", "id_token", "code id_token", "token id_token", "token"}},
            {"grant_types_supported", {"client_credentials", kDeviceCodeGrant, "refresh_token"}},
            {"subject_types_supported", {"pairwise"}},
            {"id_token_signing_alg_values_supported", {"RS256"}},
            {"access_token_issuer", issuer(base, tenant)},
            {"tenant_region_scope", "WW"}};
}

nlohmann::json TokenService::keys() const { return {{"keys", {key().jwk}}}; }

std::string TokenService::sign(const nlohmann::json& claims) const {
    jwt::jwt_object token{jwt::params::algorithm("RS256"), jwt::params::secret(key().private_pem)};
    for (const auto& [name, value] : claims.items()) {
        if (value.is_string()) {
            token.add_claim(name, value.get<std::string>());
        } else if (value.is_number_integer()) {
            token.add_claim(name, value.get<long long>());
        } else {
            throw std::invalid_argument("a claim of a signed token is a string or an integer: " + name);
        }
    }
    token.header().add_header("kid", key().key_id);
    return token.signature();
}

std::string TokenService::issue(const std::string& base, const std::string& tenant, const ServicePrincipal& principal,
                                const std::string& audience, std::chrono::system_clock::time_point now) const {
    const std::string oid = object_id_of(principal.client_id);
    const long long seconds = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
    return sign({{"aud", audience},
                 {"iss", issuer(base, tenant)},
                 {"appid", principal.client_id},
                 {"appidacr", "1"},
                 {"idp", issuer(base, tenant)},
                 {"idtyp", "app"},
                 {"oid", oid},
                 {"sub", oid},
                 {"tid", kTenantId},
                 {"ver", "1.0"},
                 {"iat", seconds},
                 {"nbf", seconds},
                 {"exp", seconds + kLifetime.count()}});
}

namespace {

void check_secret(const std::map<std::string, std::string>& form, const ServicePrincipal& principal) {
    const std::string& client_id = principal.client_id;
    auto secret = form.find("client_secret");
    if (secret == form.end() || secret->second.empty()) {
        refuse(401, "invalid_client", 7000218,
               "The request body must contain the following parameter: 'client_assertion' or 'client_secret'.");
    }
    // In constant time: how much of a guess matched does not show in the answer's timing.
    const bool same = principal.secret.size() == secret->second.size() &&
                      CRYPTO_memcmp(principal.secret.data(), secret->second.data(), principal.secret.size()) == 0;
    if (principal.secret.empty() || !same) {
        refuse(401, "invalid_client", 7000215,
               "Invalid client secret provided. Ensure the secret being sent in the request is the client secret "
               "value, not the client secret ID, for a secret added to app '" + client_id + "'.");
    }
}

// A certificate credential: MSAL's client assertion, checked against the principal's certificate.
void check_assertion(const std::string& base, const std::string& tenant, const std::map<std::string, std::string>& form,
                     const ServicePrincipal& principal, const std::string& assertion) {
    static constexpr const char* kJwtBearer = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
    auto type = form.find("client_assertion_type");
    if (type == form.end() || type->second != kJwtBearer) {
        refuse(400, "invalid_request", 900144,
               std::string("The request body must contain the following parameter: 'client_assertion_type' with the "
                           "value '") + kJwtBearer + "'.");
    }
    if (!principal.certificate) {
        refuse(401, "invalid_client", 700027,
               "Client assertion contains an invalid signature. [Reason - The key was not found., no certificate is "
               "configured for app Id '" + principal.client_id + "': start the emulator with "
               "--service-principal-cert " + principal.client_id + ":CERT.pem]");
    }
    // MSAL's audience is the token endpoint the OpenID configuration names, v1 or v2.
    const std::vector<std::string> audiences{base + "/" + tenant + "/oauth2/token", base + "/" + tenant + "/oauth2/v2.0/token"};
    if (auto refusal = check_client_assertion(assertion, principal.client_id, *principal.certificate, audiences,
                                              std::chrono::system_clock::now())) {
        refuse(refusal->code == 50027 ? 400 : 401, refusal->code == 50027 ? "invalid_request" : "invalid_client",
               refusal->code, refusal->description);
    }
}

}  // namespace

nlohmann::json TokenService::grant(const std::string& base, const std::string& tenant,
                                   const std::map<std::string, std::string>& form) const {
    require_known_tenant(tenant);
    auto field = [&](const char* name) -> std::string {
        auto it = form.find(name);
        if (it == form.end() || it->second.empty()) {
            refuse(400, "invalid_request", 900144,
                   std::string("The request body must contain the following parameter: '") + name + "'.");
        }
        return it->second;
    };
    const std::string grant_type = field("grant_type");
    if (grant_type == kDeviceCodeGrant || grant_type == "refresh_token") return grant_for_user(*this, base, tenant, form);
    if (grant_type != "client_credentials") {
        refuse(400, "unsupported_grant_type", 70003,
               "The app requested an unsupported grant type '" + grant_type + "'. This emulator signs in service "
               "principals with a client secret or a certificate (client_credentials), and its well-known user with "
               "a device code (" + std::string(kDeviceCodeGrant) + ") and refresh tokens.");
    }
    const std::string client_id = field("client_id");
    // v2 clients ask for RESOURCE/.default; v1 clients name the resource.
    std::string audience;
    if (auto scope = form.find("scope"); scope != form.end() && !scope->second.empty()) {
        const std::string& s = scope->second;
        static constexpr std::string_view kDefault = "/.default";
        if (s.size() <= kDefault.size() || !s.ends_with(kDefault) || s.find(' ') != std::string::npos) {
            refuse(400, "invalid_scope", 1002012,
                   "The provided value for scope " + s + " is not valid. Client credential flows must have a scope "
                   "value with /.default suffixed to the resource identifier (application ID URI).");
        }
        audience = s.substr(0, s.size() - kDefault.size());
    } else {
        audience = field("resource");
    }
    if (audience.starts_with(kOwnAudiencePrefix)) {
        refuse(400, "invalid_resource", 500011, "The resource principal named " + audience + " was not found in the tenant.");
    }
    std::optional<ServicePrincipal> principal = principals_.find(client_id);
    if (!principal) {
        refuse(400, "unauthorized_client", 700016,
               "Application with identifier '" + client_id + "' was not found in the directory '" + kTenantName +
                   "'. This can happen if the application has not been installed by the administrator of the tenant "
                   "or consented to by any user in the tenant. You may have sent your authentication request to the "
                   "wrong tenant.");
    }
    if (auto assertion = form.find("client_assertion"); assertion != form.end() && !assertion->second.empty()) {
        check_assertion(base, tenant, form, *principal, assertion->second);
    } else {
        check_secret(form, *principal);
    }
    const auto now = std::chrono::system_clock::now();
    const auto expires = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch() + kLifetime).count();
    return {{"token_type", "Bearer"},
            {"expires_in", kLifetime.count()},
            {"ext_expires_in", kLifetime.count()},
            {"expires_on", std::to_string(expires)},
            {"resource", audience},
            {"access_token", issue(base, tenant, *principal, audience, now)}};
}

TokenVerdict TokenService::verify(const std::string& token, const std::vector<std::string>& audiences) const {
    using namespace jwt::params;
    TokenVerdict verdict;
    if (!is_compact_jwt(token)) return verdict;
    // Outside the try: a key that cannot be made is the service's failure, not the token's.
    const std::string& public_pem = key().public_pem;
    try {
        // RS256 with this service's key and no other algorithm; exp and nbf against the clock,
        // with the five minutes' leeway the cloud allows.
        std::error_code ec;
        auto decoded = jwt::decode(token, algorithms({"RS256"}), ec, secret(public_pem), jwt::params::verify(true), leeway(300));
        if (jwt_error_is(ec, jwt::VerificationErrc::TokenExpired)) {
            verdict.check = TokenCheck::expired;
            verdict.claims = nlohmann::json::parse(decoded.payload().create_json_obj().dump());
            return verdict;
        }
        if (ec) return verdict;
        verdict.claims = nlohmann::json::parse(decoded.payload().create_json_obj().dump());
    } catch (const std::exception&) {
        return verdict;
    }
    const nlohmann::json& c = verdict.claims;
    if (!c.contains("exp") || !c["exp"].is_number_integer() || !c.contains("aud") || !c["aud"].is_string()) {
        return verdict;
    }
    const std::string audience = c["aud"].get<std::string>();
    verdict.check = std::find(audiences.begin(), audiences.end(), audience) == audiences.end() ? TokenCheck::wrong_audience
                                                                                               : TokenCheck::valid;
    return verdict;
}

void add_identity_routes(http::Routes& routes, const TokenService& service, const std::string& base) {
    auto answer = [](httplib::Response& res, int status, const nlohmann::json& body) {
        res.status = status;
        res.set_header("Cache-Control", "no-store, no-cache");
        res.set_content(body.dump(), "application/json; charset=utf-8");
    };
    auto guarded = [answer](const std::function<void(httplib::Response&)>& run, httplib::Response& res) {
        try {
            run(res);
        } catch (const SignInError& e) {
            answer(res, e.status, error_body(e));
        } catch (const std::exception& e) {
            answer(res, 500, error_body({500, "server_error", 90033, std::string("The emulator failed: ") + e.what()}));
        }
    };
    // Tenants are GUIDs, names of letters ("organizations") or domain names: no slash.
    const std::string tenant = "/([A-Za-z0-9][A-Za-z0-9.-]*)";
    for (const char* path : {"/.well-known/openid-configuration", "/v2.0/.well-known/openid-configuration"}) {
        const bool v2 = std::string_view(path).starts_with("/v2.0");
        routes.Get(tenant + path, [&service, base, answer, guarded, v2](const httplib::Request& req, httplib::Response& res) {
            guarded([&](httplib::Response& r) { answer(r, 200, service.openid_configuration(base, req.matches[1], v2)); },
                    res);
        });
    }
    for (const char* path : {"/oauth2/devicecode", "/oauth2/v2.0/devicecode"}) {
        routes.Post(tenant + path, [&service, base, answer, guarded](const httplib::Request& req, httplib::Response& res) {
            guarded([&](httplib::Response& r) { answer(r, 200, start_device_flow(service, base, req.matches[1], parse_form(req.body))); },
                    res);
        });
    }
    // MSAL's instance discovery (which names the authority's aliases): the emulator's authority is
    // every name of the public cloud's.
    routes.Get(tenant + "/discovery/instance", [base, answer](const httplib::Request& req, httplib::Response& res) {
        std::string host = base.substr(base.find("://") + 3);
        const std::string tenant_name = req.matches[1];
        answer(res, 200,
               {{"tenant_discovery_endpoint", base + "/" + tenant_name + "/v2.0/.well-known/openid-configuration"},
                {"api-version", "1.1"},
                {"metadata",
                 {{{"preferred_network", host},
                   {"preferred_cache", host},
                   {"aliases", host == "login.microsoftonline.com"
                                   ? nlohmann::json{"login.microsoftonline.com", "login.windows.net", "login.microsoft.com", "sts.windows.net"}
                                   : nlohmann::json{host}}}}}});
    });
    for (const char* path : {"/discovery/keys", "/discovery/v2.0/keys"}) {
        routes.Get(tenant + path, [&service, answer](const httplib::Request&, httplib::Response& res) {
            answer(res, 200, service.keys());
        });
    }
    for (const char* path : {"/oauth2/token", "/oauth2/v2.0/token"}) {
        routes.Post(tenant + path, [&service, base, answer, guarded](const httplib::Request& req, httplib::Response& res) {
            guarded([&](httplib::Response& r) { answer(r, 200, service.grant(base, req.matches[1], parse_form(req.body))); },
                    res);
        });
    }
}

}  // namespace bai::identity
