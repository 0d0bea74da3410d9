// libFuzzer: the sign-in service's token endpoint, from the raw form body to the grant or its
// refusal, with a secret or a client assertion (the well-known principal has a certificate here,
// whose key is the signing key's). A grant must name the well-known principal and carry its
// secret or an assertion.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "emulator/identity/token_service.h"

namespace {

bai::identity::TokenService& service() {
    static bai::identity::TokenService instance = [] {
        char pattern[] = "/tmp/bai-fuzz-identity-XXXXXX";
        std::filesystem::path dir = ::mkdtemp(pattern);
        bai::identity::SigningKey key = bai::identity::load_or_create_signing_key(dir);
        std::filesystem::remove_all(dir);
        bai::identity::ServicePrincipal with_certificate{
            bai::identity::kWellKnownClientId, "",
            bai::identity::ClientCertificate{key.public_pem, "00112233445566778899AABBCCDDEEFF00112233"}};
        return bai::identity::TokenService(std::move(key), bai::identity::ServicePrincipals({with_certificate}));
    }();
    return instance;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string body(reinterpret_cast<const char*>(data), size);
    try {
        auto fields = bai::identity::parse_form(body);
        nlohmann::json granted = service().grant("https://127.0.0.1:10443", "adfs", fields);
        if (fields["client_secret"] != bai::identity::kWellKnownClientSecret && fields["client_assertion"].empty()) {
            __builtin_trap();
        }
        if (!granted.contains("access_token")) __builtin_trap();
    } catch (const bai::identity::SignInError& e) {
        if (e.status != 400 && e.status != 401) __builtin_trap();
    }
    return 0;
}
