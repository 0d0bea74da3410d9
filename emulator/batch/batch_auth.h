// Who a request to the Batch endpoint comes from, and for which account. The cloud finds the
// account in the host name (ACCOUNT.REGION.batch.azure.com); the emulator serves every account on
// one address, so the account is found in the path's first segment when it names one (the form of
// a Microsoft.Batch account's accountEndpoint, HOST:PORT/ACCOUNT, which `az batch account login`
// turns into https://HOST:PORT/ACCOUNT/), or else in the SharedKey header. Two schemes:
// "SharedKey ACCOUNT:SIGNATURE" (batch_shared_key.h) and "Bearer TOKEN" (Microsoft Entra ID), for
// which the account must be in the path. Bearer tokens are taken as they come, as ARM takes them,
// unless the emulator runs with --strict-auth: then they must be the sign-in service's, unexpired,
// for https://batch.core.windows.net/.
#pragma once

#include <httplib.h>

#include <string>

#include "emulator/batch/batch_account.h"
#include "emulator/identity/token_service.h"

namespace bai::batch {

// The header in which take_account_from_path() leaves the account it took off the path (a
// client's own header of this name is dropped first).
inline constexpr const char* kPathAccountHeader = "x-emulator-batch-account-in-path";

// When the decoded path starts with /ACCOUNT/ and ACCOUNT is one of `accounts`, takes it off the
// path (routes see /pools...) and names it in kPathAccountHeader. request.target stays as sent:
// a SharedKey signature covers the whole path.
void take_account_from_path(httplib::Request& request, const BatchAccountRegistry& accounts);

// The account a request acts for. Throws BatchError: 401 AuthenticationFailed without an
// Authorization header, for an unknown scheme, for a bearer token without an account in the path
// and (strict: `tokens` not null) for a token that is not valid for Batch; 403 AuthenticationFailed
// for a SharedKey signature that does not hold or names another account than the path.
BatchAccount authenticate(const httplib::Request& request, const BatchAccountRegistry& accounts,
                          const identity::TokenService* tokens);

}  // namespace bai::batch
