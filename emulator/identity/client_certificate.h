// A service principal's certificate credential, as Microsoft Entra ID keeps one: the certificate
// (its public key and SHA-1 thumbprint) registered for the application, and the check of a client
// assertion, the JWT that MSAL signs with the certificate's private key in place of a secret
// (RS256; aud the token endpoint; iss and sub the client id; exp).
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace bai::identity {

struct ClientCertificate {
    std::string public_key_pem;  // the certificate's public key (PEM SubjectPublicKeyInfo)
    std::string thumbprint;  // SHA-1 of the DER certificate, upper-case hex, as the portal shows it
};

// The first certificate of a PEM file (a file with the private key beside it, as az takes, will
// do: only the certificate is read). Throws std::invalid_argument naming the file and what is
// wrong.
ClientCertificate load_client_certificate(const std::filesystem::path& pem_file);

// Why an assertion was refused, as the sign-in service words it (its AADSTS code and description).
struct AssertionRefusal {
    int code;
    std::string description;
};

// Checks `assertion` for `client_id` against `certificate`: signed by its key with RS256, for one
// of `audiences` (the token endpoint's URLs), issued by and about `client_id`, within its time
// range (five minutes' leeway). Returns the refusal, or nothing when it holds.
std::optional<AssertionRefusal> check_client_assertion(const std::string& assertion,
                                                       const std::string& client_id,
                                                       const ClientCertificate& certificate,
                                                       const std::vector<std::string>& audiences,
                                                       std::chrono::system_clock::time_point now);

}  // namespace bai::identity
