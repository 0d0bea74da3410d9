// The ARM front door's first check: a request carries "Authorization: Bearer TOKEN"; a missing,
// empty or malformed header is refused as ARM refuses it, before routing. Which tokens are valid
// is checked only with --strict-auth (any token serves by default, as the SDKs' tests pass their
// own): then a token must be one the emulator's sign-in service issued, unexpired, for ARM.
#pragma once

#include <httplib.h>

#include <string>

#include "emulator/identity/token_service.h"

namespace bai::arm {

// Throws CloudError 401 AuthenticationFailed (no header, or not "Bearer TOKEN") or
// InvalidAuthenticationToken (a token that is not a token68 string), with ARM's
// WWW-Authenticate header.
// Returns the token.
std::string require_bearer_token(const httplib::Request& request);

// --strict-auth: throws CloudError 401 InvalidAuthenticationToken (not the emulator's, or not a
// token), ExpiredAuthenticationToken, or InvalidAuthenticationTokenAudience (issued for another
// resource than ARM), with ARM's messages and WWW-Authenticate header.
void check_arm_token(const identity::TokenService& tokens, const std::string& token);

}  // namespace bai::arm
