// Signing in as a user: the device-code flow (`az login --use-device-code`, and `az login` where no
// browser can be opened), which the emulator completes at once for the well-known user of its
// tenant, and the refresh tokens with which MSAL then gets tokens for other tenants and resources
// silently. The device code and the refresh token are tokens signed by the service itself, so no
// state is kept between the requests of a flow.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "emulator/identity/token_service.h"

namespace bai::identity {

inline constexpr const char* kWellKnownUserName = "user@batchaiemulator.onmicrosoft.com";
inline constexpr const char* kWellKnownUserDisplayName = "Batch AI Emulator User";
inline constexpr const char* kDeviceCodeGrant = "urn:ietf:params:oauth:grant-type:device_code";

// The well-known user's object id (fixed: a name-based GUID).
std::string well_known_user_object_id();

// POST /{tenant}/oauth2/devicecode (v1: `resource`) and /{tenant}/oauth2/v2.0/devicecode (v2:
// `scope`): the device code, the user code and the message a client shows. Throws SignInError.
nlohmann::json start_device_flow(const TokenService& service, const std::string& base, const std::string& tenant,
                                 const std::map<std::string, std::string>& form);

// The token endpoint's grants for users: the device code (completed at once, for the well-known
// user) and the refresh token. Each answers an access token for the resource asked for, a refresh
// token, and for v2 clients an id token and, where asked, client_info. Throws SignInError.
nlohmann::json grant_for_user(const TokenService& service, const std::string& base, const std::string& tenant,
                              const std::map<std::string, std::string>& form);

}  // namespace bai::identity
