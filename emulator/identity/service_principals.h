// Who may sign in: service principals with a client secret. A well-known one always exists (its
// id and secret are printed at start, as the storage account's key is); --service-principal
// ID:SECRET adds more. The emulator's one tenant and its default subscription are well-known too.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace bai::identity {

inline constexpr const char* kTenantId = "ba1e7e4a-0000-4000-8000-000000000001";
inline constexpr const char* kTenantName = "Batch AI Emulator";
inline constexpr const char* kDefaultSubscriptionId = "ba1e5ab5-0000-4000-8000-000000000001";
inline constexpr const char* kWellKnownClientId = "ba1eca11-0000-4000-8000-000000000001";
inline constexpr const char* kWellKnownClientSecret = "batchai-emulator-well-known-secret";

struct ServicePrincipal {
    std::string client_id;  // the application (client) id, a GUID
    std::string secret;
};

// "ID:SECRET" (the id a GUID, the secret not empty). Throws std::invalid_argument naming what is wrong.
ServicePrincipal parse_service_principal(const std::string& text);

// The well-known principal, then `more` (a later one with the same id replaces an earlier one).
class ServicePrincipals {
public:
    explicit ServicePrincipals(const std::vector<ServicePrincipal>& more = {});
    std::optional<ServicePrincipal> find(const std::string& client_id) const;

private:
    std::vector<ServicePrincipal> all_;
};

// The principal's object id in the tenant (the tokens' "oid"): derived from its client id, so it
// is the same on every start.
std::string object_id_of(const std::string& client_id);

bool is_guid(const std::string& text);

}  // namespace bai::identity
