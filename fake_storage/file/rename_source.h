// The source of Rename File and Rename Directory (x-ms-file-rename-source): which entry of the
// request's share it names, and whether the caller may move it away from there.
#pragma once

#include <string>

#include "fake_storage/accounts/account_registry.h"
#include "fake_storage/http/storage_endpoint.h"

namespace bai::storage {

// The source's path in the request's share. The header is the source's URL (this emulator's
// path-style URL, or the cloud's https://ACCOUNT.file.core.windows.net/SHARE/PATH mapped to the
// local account), with the source's SAS in its query when the caller uses one (the SDKs add the
// client's own). 400 InvalidHeaderValue naming the header when it is missing a path, or names
// another account or share: the service renames within a share.
// The request's own authorization covers the destination. A shared key (or a token) of the
// account covers the source as well; a SAS request's source URL must carry a SAS of the account
// that allows deleting there (the source's name goes away): otherwise 403
// AuthorizationPermissionMismatch (a choice: the service's own rule for a SAS is not documented).
std::string authorize_rename_source(const StorageCall& call, AccountRegistry& accounts, bool directory);

}  // namespace bai::storage
