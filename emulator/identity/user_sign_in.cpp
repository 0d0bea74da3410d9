#include "emulator/identity/user_sign_in.h"

#include <cctype>
#include <chrono>
#include <cstdio>
#include <sstream>

#include "common/crypto/base64.h"
#include "common/log/logger.h"
#include "common/text/ascii.h"
#include "emulator/identity/service_principals.h"

namespace bai::identity {
namespace {

// The audiences of the service's own tokens that stand for a flow's state, never for a resource.
constexpr const char* kDeviceCodeAudience = "urn:batchai-emulator:device-code";
constexpr const char* kRefreshAudience = "urn:batchai-emulator:refresh-token";

constexpr const char* kUserCode = "EMULATOR";
constexpr std::chrono::seconds kDeviceCodeLifetime{900};
constexpr std::chrono::hours kRefreshLifetime{24 * 90};

[[noreturn]] void deny(int status, std::string error, int code, std::string description) {
    throw SignInError{status, std::move(error), code, std::move(description)};
}

std::string required_field(const std::map<std::string, std::string>& form, const char* name) {
    auto it = form.find(name);
    if (it == form.end() || it->second.empty()) {
        deny(400, "invalid_request", 900144, std::string("The request body must contain the following parameter: '") + name + "'.");
    }
    return it->second;
}

std::string optional_field(const std::map<std::string, std::string>& form, const char* name) {
    auto it = form.find(name);
    return it == form.end() ? std::string() : it->second;
}

bool is_guid(const std::string& text) {
    if (text.size() != 36) return false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? c != '-' : !std::isxdigit(static_cast<unsigned char>(c))) return false;
    }
    return true;
}

// A user signs in through an application, named by its GUID (az's is 04b07795-...): nothing else,
// so that an id token (whose audience is the client) is never one for a resource, and the client
// id printed and logged holds no control characters.
std::string user_client_id(const TokenService& service, const std::map<std::string, std::string>& form) {
    if (!service.users_sign_in()) {
        deny(400, "unauthorized_client", 7000112,
             "The emulator runs with --strict-auth: its well-known user does not sign in without a secret (device "
             "code, refresh token). Sign in as a service principal with its secret or certificate.");
    }
    const std::string client_id = required_field(form, "client_id");
    if (!is_guid(client_id)) {
        deny(400, "unauthorized_client", 700016,
             "An application's identifier is a GUID: the one given was not found in the directory.");
    }
    return client_id;
}

std::string base64url(const std::string& bytes) {
    std::string out = crypto::base64_encode(bytes);
    for (char& c : out) c = c == '+' ? '-' : c == '/' ? '_' : c;
    while (!out.empty() && out.back() == '=') out.pop_back();
    return out;
}

long long seconds_now() {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// What a flow asks for: the resource (v1 `resource`, or the resource of the first scope that is not
// one of OpenID's), and the scopes as asked (v2).
struct Request {
    std::string resource;
    std::string scope;
    bool v2 = false;
};

Request what_is_asked(const std::map<std::string, std::string>& form) {
    Request r;
    r.scope = optional_field(form, "scope");
    r.v2 = !r.scope.empty();
    if (!r.v2) {
        r.resource = required_field(form, "resource");
        return r;
    }
    std::istringstream words(r.scope);
    for (std::string s; words >> s;) {
        if (s == "openid" || s == "profile" || s == "offline_access" || s == "email") continue;
        if (s.ends_with("/.default")) {
            r.resource = s.substr(0, s.size() - std::string_view("/.default").size());
        } else if (size_t slash = s.rfind('/'); slash != std::string::npos && slash > 0) {
            r.resource = s.substr(0, slash);  // RESOURCE/permission
        } else {
            r.resource = s;
        }
        break;
    }
    // Only OpenID's scopes: a token for Microsoft Graph, as the cloud gives one.
    if (r.resource.empty()) r.resource = "https://graph.microsoft.com";
    // "https://management.core.windows.net//.default" names the resource with its trailing '/'.
    if (r.resource.starts_with(kOwnAudiencePrefix)) {
        deny(400, "invalid_resource", 500011, "The resource principal named " + r.resource + " was not found in the tenant.");
    }
    return r;
}

nlohmann::json user_tokens(const TokenService& service, const std::string& base, const std::string& client_id,
                           const Request& asked, bool client_info) {
    const long long now = seconds_now();
    const long long expires = now + TokenService::kLifetime.count();
    const std::string oid = well_known_user_object_id();
    const std::string sts = "https://sts.windows.net/" + std::string(kTenantId) + "/";
    nlohmann::json access{{"aud", asked.resource},
                          {"iss", sts},
                          {"iat", now},
                          {"nbf", now},
                          {"exp", expires},
                          {"appid", client_id},
                          {"appidacr", "0"},
                          {"idtyp", "user"},
                          {"name", kWellKnownUserDisplayName},
                          {"oid", oid},
                          {"scp", "user_impersonation"},
                          {"sub", oid},
                          {"tid", kTenantId},
                          {"unique_name", kWellKnownUserName},
                          {"upn", kWellKnownUserName},
                          {"ver", "1.0"}};
    nlohmann::json refresh{{"aud", kRefreshAudience},
                           {"iss", sts},
                           {"iat", now},
                           {"nbf", now},
                           {"exp", now + std::chrono::duration_cast<std::chrono::seconds>(kRefreshLifetime).count()},
                           {"appid", client_id},
                           {"oid", oid}};
    nlohmann::json out{{"token_type", "Bearer"},
                       {"expires_in", TokenService::kLifetime.count()},
                       {"ext_expires_in", TokenService::kLifetime.count()},
                       {"access_token", service.sign(access)},
                       {"refresh_token", service.sign(refresh)}};
    if (asked.v2) {
        out["scope"] = asked.resource + "/user_impersonation " + asked.resource + "/.default";
        nlohmann::json id{{"aud", client_id},
                          {"iss", base + "/" + std::string(kTenantId) + "/v2.0"},
                          {"iat", now},
                          {"nbf", now},
                          {"exp", expires},
                          {"name", kWellKnownUserDisplayName},
                          {"oid", oid},
                          {"preferred_username", kWellKnownUserName},
                          {"sub", oid},
                          {"tid", kTenantId},
                          {"ver", "2.0"}};
        out["id_token"] = service.sign(id);
        if (client_info) out["client_info"] = base64url(nlohmann::json{{"uid", oid}, {"utid", kTenantId}}.dump());
    } else {
        out["resource"] = asked.resource;
        out["expires_on"] = std::to_string(expires);
    }
    return out;
}

// The claims of one of the service's own flow tokens (a device code, a refresh token).
nlohmann::json own_claims(const TokenService& service, const std::string& token, const char* audience, int error_code,
                          const char* error, const std::string& what) {
    TokenVerdict verdict = service.verify(token, {audience});
    if (verdict.check == TokenCheck::expired) deny(400, error, error_code, "The " + what + " has expired.");
    if (verdict.check != TokenCheck::valid) deny(400, "invalid_grant", 9002313, "Invalid request. The " + what + " is malformed or not valid.");
    return verdict.claims;
}

}  // namespace

std::string well_known_user_object_id() { return object_id_of(std::string("user:") + kWellKnownUserName); }

nlohmann::json start_device_flow(const TokenService& service, const std::string& base, const std::string& tenant,
                                 const std::map<std::string, std::string>& form) {
    require_known_tenant(tenant);
    const std::string client_id = user_client_id(service, form);
    const Request asked = what_is_asked(form);
    const long long now = seconds_now();
    nlohmann::json code{{"aud", kDeviceCodeAudience}, {"iat", now}, {"nbf", now},
                        {"exp", now + kDeviceCodeLifetime.count()}, {"appid", client_id}, {"resource", asked.resource},
                        {"scope", asked.scope}};
    const std::string verification = "https://microsoft.com/devicelogin";
    const std::string message = "To sign in, use a web browser to open the page " + verification + " and enter the code " +
                                kUserCode + " to authenticate. (The Batch AI emulator completes this sign-in itself, as " +
                                kWellKnownUserName + ": there is nothing to do.)";
    log::info("sign-in: device code flow for client " + client_id + " at " + base + "/" + tenant +
              ", completed at once as " + kWellKnownUserName);
    return {{"user_code", kUserCode},
            {"device_code", service.sign(code)},
            {"verification_uri", verification},
            {"verification_url", verification},  // v1's name
            {"expires_in", kDeviceCodeLifetime.count()},
            {"interval", 1},
            {"message", message}};
}

nlohmann::json grant_for_user(const TokenService& service, const std::string& base, const std::string& tenant,
                              const std::map<std::string, std::string>& form) {
    require_known_tenant(tenant);
    const std::string grant_type = required_field(form, "grant_type");
    const std::string client_id = user_client_id(service, form);
    Request asked;
    if (grant_type == kDeviceCodeGrant) {
        const std::string device_code = optional_field(form, "device_code").empty() ? optional_field(form, "code")
                                                                                    : optional_field(form, "device_code");
        if (device_code.empty()) required_field(form, "device_code");  // refused, naming it
        nlohmann::json claims = own_claims(service, device_code, kDeviceCodeAudience, 70019, "expired_token", "device code");
        if (claims.value("appid", "") != client_id) {
            deny(400, "invalid_grant", 70000, "The device code was issued to another client than '" + client_id + "'.");
        }
        // MSAL redeems the code without naming the scopes again: those the flow started with count.
        std::map<std::string, std::string> started{{"resource", claims.value("resource", "")}};
        if (!claims.value("scope", "").empty()) started = {{"scope", claims.value("scope", "")}};
        asked = what_is_asked(form.contains("scope") || form.contains("resource") ? form : started);
        // Said where the emulator's user sees it (its terminal), not only in its log: nobody typed the code.
        const std::string done = "sign-in: completed a device-code sign-in at once, as " + std::string(kWellKnownUserName) +
                                 " (client " + client_id + ")";
        log::write_to_file(log::Level::info, done);
        std::printf("%s\n", done.c_str());
        std::fflush(stdout);
    } else if (grant_type == "refresh_token") {
        nlohmann::json claims = own_claims(service, required_field(form, "refresh_token"), kRefreshAudience, 700082, "invalid_grant", "refresh token");
        if (claims.value("appid", "") != client_id) {
            deny(400, "invalid_grant", 70000, "The refresh token was issued to another client than '" + client_id + "'.");
        }
        asked = what_is_asked(form);
    } else {
        deny(400, "unsupported_grant_type", 70003, "The app requested an unsupported grant type '" + grant_type + "'.");
    }
    return user_tokens(service, base, client_id, asked, optional_field(form, "client_info") == "1");
}

}  // namespace bai::identity
