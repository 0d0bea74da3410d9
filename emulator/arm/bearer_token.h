// The ARM front door's first check: a request carries "Authorization: Bearer TOKEN". Which
// tokens are valid is not checked here (the emulator issues none of its own); a missing, empty or
// malformed header is refused as ARM refuses it, before routing.
#pragma once

#include <httplib.h>

namespace bai::arm {

// Throws CloudError 401 AuthenticationFailed (no header, or not "Bearer TOKEN") or
// InvalidAuthenticationToken (a token that is not a token68 string), with ARM's
// WWW-Authenticate header.
void require_bearer_token(const httplib::Request& request);

}  // namespace bai::arm
