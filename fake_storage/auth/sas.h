// Shared access signatures: account SAS and service SAS (Blob: container and blob; File: share
// and file), signed with the account key.
#pragma once

#include <string>

#include "common/time/timestamps.h"
#include "fake_storage/accounts/account_registry.h"
#include "fake_storage/http/storage_request.h"

namespace bai::storage {

enum class SasService { blob, file };
enum class ResourceLevel { service, container, object };

// What a request needs from a SAS.
struct SasNeed {
    SasService service;
    ResourceLevel level;
    std::string container;    // container or share; empty at service level
    std::string name;         // blob name or file path; empty above object level
    std::string permissions;  // any one of these letters suffices ("cw": create or write)
};

bool has_sas(const StorageRequest& request);

// Throws StorageError 403 (AuthenticationFailed, AuthorizationPermissionMismatch,
// AuthorizationResourceTypeMismatch, AuthorizationServiceMismatch, AuthorizationSourceIPMismatch)
// or 400 for malformed parameters, as the service does.
void verify_sas(const StorageRequest& request, const Account& account, const SasNeed& need,
                time::TimePoint now);

// The string-to-sign of the SAS in `request` (for tests and error messages).
std::string sas_string_to_sign(const StorageRequest& request, const std::string& account,
                               const SasNeed& need);

}  // namespace bai::storage
