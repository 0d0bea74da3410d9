#include "emulator/identity/client_certificate.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <fstream>
#include <jwt/jwt.hpp>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "common/crypto/digest.h"
#include "common/crypto/owned.h"
#include "common/text/ascii.h"
#include "emulator/identity/jwt_guard.h"

namespace bai::identity {
namespace {

// The thumbprint a client names in its assertion's header (x5t: base64url of the SHA-1), as hex.
// `assertion` has passed is_compact_jwt().
std::string named_thumbprint(const std::string& assertion) {
    try {
        const std::string header = assertion.substr(0, assertion.find('.'));
        nlohmann::json parsed =
            nlohmann::json::parse(jwt::base64_uri_decode(header.data(), header.size()));
        if (!parsed.contains("x5t") || !parsed["x5t"].is_string()) return "";
        const std::string x5t = parsed["x5t"].get<std::string>();
        if (!is_base64url(x5t)) return "";
        const std::string digest = jwt::base64_uri_decode(x5t.data(), x5t.size());
        return text::upper(crypto::hex_of(digest));
    } catch (const std::exception&) {
        return "";
    }
}

bool names_one_of(const nlohmann::json& aud, const std::vector<std::string>& audiences) {
    auto known = [&](const nlohmann::json& one) {
        return one.is_string() && std::find(audiences.begin(), audiences.end(),
                                            one.get<std::string>()) != audiences.end();
    };
    if (aud.is_array()) return std::any_of(aud.begin(), aud.end(), known);
    return known(aud);
}

}  // namespace

ClientCertificate load_client_certificate(const std::filesystem::path& pem_file) {
    std::ifstream in(pem_file, std::ios::binary);
    if (!in) throw std::invalid_argument("cannot read the certificate file " + pem_file.string());
    std::stringstream text;
    text << in.rdbuf();
    const std::string pem = text.str();
    crypto::Owned<BIO, BIO_free> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
    crypto::Owned<X509, X509_free> certificate(
        bio ? PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr) : nullptr);
    if (!certificate)
        throw std::invalid_argument(pem_file.string() +
                                    " holds no PEM certificate (BEGIN CERTIFICATE)");
    const std::string thumbprint = text::upper(crypto::certificate_thumbprint(certificate.get()));
    if (thumbprint.empty()) {
        throw std::invalid_argument("cannot take the thumbprint of the certificate in " +
                                    pem_file.string());
    }
    EVP_PKEY* key = X509_get0_pubkey(certificate.get());  // owned by the certificate
    if (key == nullptr || EVP_PKEY_base_id(key) != EVP_PKEY_RSA) {
        throw std::invalid_argument("the certificate in " + pem_file.string() +
                                    " does not hold an RSA key (RS256 needs one)");
    }
    crypto::Owned<BIO, BIO_free> out(BIO_new(BIO_s_mem()));
    if (!out || PEM_write_bio_PUBKEY(out.get(), key) != 1)
        throw std::runtime_error("cannot write a public key");
    char* data = nullptr;
    const long length = BIO_get_mem_data(out.get(), &data);
    return {std::string(data, static_cast<size_t>(length)), thumbprint};
}

std::optional<AssertionRefusal> check_client_assertion(const std::string& assertion,
                                                       const std::string& client_id,
                                                       const ClientCertificate& certificate,
                                                       const std::vector<std::string>& audiences,
                                                       std::chrono::system_clock::time_point now) {
    using namespace jwt::params;
    if (!is_compact_jwt(assertion)) {
        return AssertionRefusal{50027, "JWT token is invalid or malformed: it is not three base64url parts."};
    }
    nlohmann::json claims;
    std::error_code ec;
    try {
        auto decoded = jwt::decode(assertion, algorithms({"RS256"}), ec,
                                   secret(certificate.public_key_pem), verify(true), leeway(300));
        if (!ec || jwt_error_is(ec, jwt::VerificationErrc::TokenExpired) ||
            jwt_error_is(ec, jwt::VerificationErrc::ImmatureSignature)) {
            claims = nlohmann::json::parse(decoded.payload().create_json_obj().dump());
        }
    } catch (const std::exception&) {
        return AssertionRefusal{50027, "JWT token is invalid or malformed."};
    }
    const auto seconds =
        std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
    if (jwt_error_is(ec, jwt::VerificationErrc::TokenExpired) ||
        jwt_error_is(ec, jwt::VerificationErrc::ImmatureSignature)) {
        return AssertionRefusal{
            700024, "Client assertion is not within its valid time range. Current time: " +
                        std::to_string(seconds) + ", assertion valid from " +
                        std::to_string(claims.value("nbf", 0L)) + ", expiry time of assertion " +
                        std::to_string(claims.value("exp", 0L)) + "."};
    }
    if (ec && !jwt_error_is(ec, jwt::AlgorithmErrc::VerificationErr) &&
        !jwt_error_is(ec, jwt::VerificationErrc::InvalidSignature)) {
        return AssertionRefusal{50027, "JWT token is invalid or malformed: " + ec.message() + "."};
    }
    if (ec) {
        const std::string used = named_thumbprint(assertion);
        return AssertionRefusal{
            700027,
            "Client assertion contains an invalid signature. [Reason - The key was not "
            "found., Thumbprint of key used by client: '" +
                used + "', Found key 'Thumbprint=" + certificate.thumbprint +
                "', the certificate the emulator was given for app Id '" + client_id +
                "' (--service-principal-cert).]"};
    }
    if (!claims.contains("exp"))
        return AssertionRefusal{50027, "JWT token is invalid or malformed: it has no 'exp' claim."};
    if (claims.value("iss", std::string()) != client_id ||
        claims.value("sub", std::string()) != client_id) {
        return AssertionRefusal{
            700021,
            "Client assertion application identifier doesn't match 'client_id' parameter. "
            "Review the documentation at https://docs.microsoft.com/azure/active-directory/"
            "develop/active-directory-certificate-credentials ."};
    }
    if (!claims.contains("aud") || !names_one_of(claims["aud"], audiences)) {
        return AssertionRefusal{
            700023,
            "Client assertion audience claim does not match Realm issuer. Review the "
            "documentation at https://docs.microsoft.com/azure/active-directory/develop/"
            "active-directory-certificate-credentials ."};
    }
    return std::nullopt;
}

}  // namespace bai::identity
