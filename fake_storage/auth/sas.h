// Shared access signatures: account SAS and service SAS (Blob: container and blob; File: share
// and file), signed with the account key, and what each operation asks of them.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "common/time/timestamps.h"
#include "fake_storage/accounts/account_registry.h"
#include "fake_storage/http/storage_request.h"

namespace bai::storage {

enum class SasService { blob, file };
enum class ResourceLevel { service, container, object };

// Which service SAS may grant an operation: none (the service's "a service SAS can't grant
// access to" list: containers and shares themselves, their properties, metadata and ACLs), a
// container or share SAS only (listing; the File service's directories), or also a SAS for the
// one blob or file the request names.
enum class ServiceSasScope { none, container, container_or_object };

// What an operation asks of a SAS, from "Create an account SAS" and "Create a service SAS".
// Letters: any one of them grants the operation; an empty string: no SAS of that kind may.
struct SasRule {
    // The signed resource type (srt) an account SAS needs; nullopt: any.
    std::optional<ResourceLevel> level;
    std::string account_letters;
    std::string service_letters;
    ServiceSasScope scope = ServiceSasScope::none;
    // 'c' grants it for a resource that does not exist yet only ("create new blobs or files, but
    // may not overwrite existing blobs or files").
    bool create_new_only = false;
};

// Every permission letter a SAS can carry: for operations that any permission allows.
inline constexpr const char* kAnyPermission = "racwdxyltfmeopiu";

// An operation an account SAS may perform with one of `letters` at `level`, and no service SAS.
inline SasRule account_only(ResourceLevel level, std::string letters) {
    return {level, std::move(letters), "", ServiceSasScope::none, false};
}

// What a request needs from a SAS: the rule of its operation and the resource it names.
struct SasNeed {
    SasService service;
    std::string container;  // container or share; empty at service level
    std::string name;       // blob name or file path; empty above object level
    SasRule rule;
};

// What a verified SAS allows beyond "yes".
struct SasGrant {
    // Only 'c' granted the operation: it may create its resource but not replace it.
    bool create_new_only = false;
};

bool has_sas(const StorageRequest& request);

// A stored access policy that a service SAS names (si): what the SAS does not say itself.
struct StoredPolicy {
    std::optional<time::TimePoint> start;
    std::optional<time::TimePoint> expiry;
    std::string permission;
};
// The policy `id` of `container` in `account` (nullopt when there is none).
using PolicyLookup = std::function<std::optional<StoredPolicy>(const std::string& account, const std::string& container,
                                                               const std::string& id)>;

// A user delegation key (Get User Delegation Key): the fields a user delegation SAS carries as
// skoid, sktid, skt, ske, sks and skv, and the key's value, derived from them and the account's
// first key (so a SAS is verified without keeping the keys handed out).
struct UserDelegationKey {
    std::string object_id, tenant_id, start, expiry, service, version;
};
std::string user_delegation_key_value(const Account& account, const UserDelegationKey& key);

// Throws StorageError 403 (AuthenticationFailed, AuthorizationFailure,
// AuthorizationPermissionMismatch, AuthorizationResourceTypeMismatch,
// AuthorizationServiceMismatch, AuthorizationSourceIPMismatch, AuthorizationProtocolMismatch)
// as the service does. `https`: whether the request came over TLS.
// A SAS naming a stored access policy (si) takes it from `policies` (refused without one). A user
// delegation SAS (skoid, ...) is signed with its key's value.
SasGrant verify_sas(const StorageRequest& request, const Account& account, const SasNeed& need,
                    time::TimePoint now, bool https = false, const PolicyLookup& policies = {});

// The string-to-sign of the SAS in `request` (for tests and error messages).
std::string sas_string_to_sign(const StorageRequest& request, const std::string& account,
                               const SasNeed& need);

}  // namespace bai::storage
