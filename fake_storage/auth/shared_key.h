// SharedKey authentication for the Blob and File services (string-to-sign of version 2009-09-19
// and later, path-style URLs: the account name appears twice in the canonicalized resource).
#pragma once

#include <string>
#include <string_view>

#include "fake_storage/accounts/account_registry.h"
#include "fake_storage/http/storage_request.h"

namespace bai::storage {

// `resource_path` is the URL path as it goes into the canonicalized resource.
std::string shared_key_string_to_sign(const StorageRequest& request, std::string_view resource_path);

// Checks "Authorization: SharedKey ACCOUNT:SIGNATURE" against both keys of `account`, with the
// path as sent and, for clients that sign it decoded, the decoded path. Throws StorageError 403
// AuthenticationFailed naming the string the emulator signed.
void verify_shared_key(const StorageRequest& request, const Account& account);

}  // namespace bai::storage
