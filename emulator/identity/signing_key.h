// The key that signs the emulator's access tokens: RSA 2048 (RS256, as the cloud's sign-in service
// signs), made on first start and kept in DIR/signing-key.pem (mode 0600), published as a JSON
// Web Key so that a client can check a token's signature.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace bai::identity {

struct SigningKey {
    std::string private_pem;
    std::string public_pem;
    std::string key_id;  // the key's JWK thumbprint (RFC 7638), the tokens' "kid"
    nlohmann::json jwk;  // {"kty": "RSA", "use": "sig", "kid", "n", "e"}
};

// Throws std::runtime_error when the key cannot be read or made.
SigningKey load_or_create_signing_key(const std::filesystem::path& dir);

// Unpadded base64url (RFC 4648 section 5), as JSON Web Tokens and Keys write bytes.
std::string base64url(std::string_view bytes);

}  // namespace bai::identity
