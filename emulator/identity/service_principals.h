// Who may sign in: service principals with a client secret, a certificate, or both. A well-known
// one always exists (its id and secret are printed at start, as the storage account's key is);
// --service-principal ID:SECRET and --service-principal-cert ID:PEM add more. The emulator's one
// tenant and its default subscription are well-known too.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "emulator/identity/client_certificate.h"

namespace bai::identity {

inline constexpr const char* kTenantId = "ba1e7e4a-0000-4000-8000-000000000001";
inline constexpr const char* kTenantName = "Batch AI Emulator";
inline constexpr const char* kTenantDomain = "batchaiemulator.onmicrosoft.com";  // the tenant's domain name
inline constexpr const char* kDefaultSubscriptionId = "ba1e5ab5-0000-4000-8000-000000000001";
inline constexpr const char* kWellKnownClientId = "ba1eca11-0000-4000-8000-000000000001";
inline constexpr const char* kWellKnownClientSecret = "batchai-emulator-well-known-secret";

struct ServicePrincipal {
    std::string client_id;  // the application (client) id, a GUID
    std::string secret;     // empty: none (it signs in with its certificate)
    std::optional<ClientCertificate> certificate;
};

// "ID:SECRET" (the id a GUID, the secret not empty). Throws std::invalid_argument naming what is wrong.
ServicePrincipal parse_service_principal(const std::string& text);
// "ID:PEM_FILE": a principal that signs in with the certificate in that file (read now).
ServicePrincipal parse_service_principal_certificate(const std::string& text);

// The well-known principal, then `more`: one with the id of an earlier one adds its secret or
// certificate to it (a later secret or certificate replaces an earlier one).
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
