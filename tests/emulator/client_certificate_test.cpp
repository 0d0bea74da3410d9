// Certificate credentials: a principal's certificate read from PEM, and the token endpoint's check
// of MSAL's client assertion (signature by the certificate's key, audience, issuer, time range).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <jwt/jwt.hpp>
#include <sstream>

#include "emulator/identity/client_certificate.h"
#include "emulator/identity/service_principals.h"
#include "emulator/identity/signing_key.h"
#include "emulator/identity/token_service.h"

namespace bai::identity {
namespace {

namespace fs = std::filesystem;

constexpr const char* kCertClient = "c1c1c1c1-2222-4333-8444-555555555555";
const std::string kBase = "https://127.0.0.1:10443";

std::string read(const fs::path& file) {
    std::ifstream in(file);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// A self-signed RSA certificate and its key, made by the openssl CLI as a user would make one.
struct KeyPair {
    fs::path certificate;
    std::string private_pem;
};

KeyPair make_certificate(const fs::path& dir, const std::string& name) {
    const fs::path key = dir / (name + ".key");
    const fs::path cert = dir / (name + ".pem");
    const std::string command = "openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=" + name +
                                " -days 2 -keyout " + key.string() + " -out " + cert.string() +
                                " 2>/dev/null";
    if (std::system(command.c_str()) != 0) throw std::runtime_error("openssl req failed");
    return {cert, read(key)};
}

class ClientCertificateTest : public ::testing::Test {
  protected:
    void SetUp() override {
        char pattern[] = "/tmp/bai-client-cert-XXXXXX";
        dir = ::mkdtemp(pattern);
        mine = make_certificate(dir, "mine");
        theirs = make_certificate(dir, "theirs");
        certificate = load_client_certificate(mine.certificate);
    }
    void TearDown() override { fs::remove_all(dir); }

    // An assertion as MSAL makes one, signed with `private_pem`.
    std::string assertion(const std::string& private_pem,
                          nlohmann::json change = nlohmann::json::object(),
                          std::chrono::seconds offset = std::chrono::seconds(0)) {
        using namespace jwt::params;
        const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                             (std::chrono::system_clock::now() + offset).time_since_epoch())
                             .count();
        nlohmann::json claims{{"aud", kBase + "/adfs/oauth2/token"},
                              {"iss", kCertClient},
                              {"sub", kCertClient},
                              {"jti", "a1"},
                              {"nbf", now},
                              {"exp", now + 600}};
        if (change.is_object()) claims.update(change);
        jwt::jwt_object token{algorithm("RS256"), secret(private_pem)};
        for (auto& [name, value] : claims.items()) {
            if (value.is_number()) {
                token.add_claim(name, value.get<long>());
            } else {
                token.add_claim(name, value.get<std::string>());
            }
        }
        token.header().add_header("x5t", "AAAA");
        return token.signature();
    }

    std::map<std::string, std::string> form(const std::string& signed_assertion) {
        return {{"grant_type", "client_credentials"},
                {"client_id", kCertClient},
                {"client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"},
                {"client_assertion", signed_assertion},
                {"scope", "https://management.core.windows.net//.default"}};
    }

    int refused_code(const TokenService& service,
                     const std::map<std::string, std::string>& fields) {
        try {
            service.grant(kBase, "adfs", fields);
        } catch (const SignInError& e) {
            return e.code;
        }
        return 0;
    }

    fs::path dir;
    KeyPair mine, theirs;
    ClientCertificate certificate;
};

TEST_F(ClientCertificateTest, ReadsTheCertificateAndItsThumbprint) {
    EXPECT_NE(certificate.public_key_pem.find("BEGIN PUBLIC KEY"), std::string::npos);
    ASSERT_EQ(certificate.thumbprint.size(), 40u);
    // The thumbprint is the one openssl shows (SHA-1 of the DER certificate).
    const fs::path out = dir / "fingerprint";
    ASSERT_EQ(std::system(("openssl x509 -in " + mine.certificate.string() +
                           " -noout -fingerprint -sha1 > " + out.string())
                              .c_str()),
              0);
    std::string shown = read(out);
    std::erase(shown, ':');
    EXPECT_NE(shown.find(certificate.thumbprint), std::string::npos) << shown;
    // A file with the key before the certificate (as az takes one) reads the same.
    const fs::path both = dir / "both.pem";
    std::ofstream(both) << mine.private_pem << read(mine.certificate);
    EXPECT_EQ(load_client_certificate(both).thumbprint, certificate.thumbprint);
    std::ofstream(dir / "key-only.pem") << mine.private_pem;
    EXPECT_THROW(load_client_certificate(dir / "key-only.pem"), std::invalid_argument);
    EXPECT_THROW(load_client_certificate(dir / "missing.pem"), std::invalid_argument);
    EXPECT_THROW(parse_service_principal_certificate(std::string(kCertClient) + ":" +
                                                     (dir / "missing.pem").string()),
                 std::invalid_argument);
    EXPECT_THROW(parse_service_principal_certificate("not-a-guid:" + mine.certificate.string()),
                 std::invalid_argument);
}

TEST_F(ClientCertificateTest, AssertionsAreCheckedAsTheSignInServiceDoes) {
    const std::vector<std::string> audiences{kBase + "/adfs/oauth2/token"};
    const auto now = std::chrono::system_clock::now();
    auto check = [&](const std::string& a) {
        auto refusal = check_client_assertion(a, kCertClient, certificate, audiences, now);
        return refusal ? refusal->code : 0;
    };
    EXPECT_EQ(check(assertion(mine.private_pem)), 0);
    auto wrong_key = check_client_assertion(assertion(theirs.private_pem), kCertClient, certificate,
                                            audiences, now);
    ASSERT_TRUE(wrong_key);
    EXPECT_EQ(wrong_key->code, 700027) << wrong_key->description;
    EXPECT_NE(wrong_key->description.find("Thumbprint of key used by client: '000000'"),
              std::string::npos)
        << wrong_key->description;
    EXPECT_EQ(check(assertion(mine.private_pem, {}, -std::chrono::hours(1))), 700024);  // expired
    EXPECT_EQ(check(assertion(mine.private_pem, {}, std::chrono::hours(1))),
              700024);  // not yet valid
    EXPECT_EQ(check(assertion(mine.private_pem, {{"aud", "https://elsewhere/token"}})), 700023);
    EXPECT_EQ(check(assertion(mine.private_pem, {{"iss", "someone-else"}})), 700021);
    EXPECT_EQ(check(assertion(mine.private_pem, {{"sub", "someone-else"}})), 700021);
    for (const char* garbage : {"", "a.b.c", "...", "eyJhbGciOiJub25lIn0.e30.", "\x80\x81.\x82.\x83",
                                "eyJhbGciOiJSUzI1NiJ9.eyJhIjoxfQ.\xff"}) {
        EXPECT_EQ(check(garbage), 50027) << garbage;
    }
    // HMAC over the certificate's public key (the algorithm confusion attack) is not a signature by
    // it.
    using namespace jwt::params;
    jwt::jwt_object forged{
        algorithm("HS256"), secret(certificate.public_key_pem),
        payload({{"aud", audiences[0]}, {"iss", kCertClient}, {"sub", kCertClient}})};
    forged.add_claim("exp", std::chrono::system_clock::now() + std::chrono::hours(1));
    EXPECT_NE(check(forged.signature()), 0);
}

TEST_F(ClientCertificateTest, TheTokenEndpointTakesACertificateInPlaceOfASecret) {
    char pattern[] = "/tmp/bai-client-key-XXXXXX";
    const fs::path key_dir = ::mkdtemp(pattern);
    ServicePrincipal with_certificate = parse_service_principal_certificate(
        std::string(kCertClient) + ":" + mine.certificate.string());
    TokenService service{load_or_create_signing_key(key_dir),
                         ServicePrincipals({with_certificate})};
    nlohmann::json answer = service.grant(kBase, "adfs", form(assertion(mine.private_pem)));
    EXPECT_EQ(answer["token_type"], "Bearer");
    EXPECT_EQ(service.verify(answer["access_token"], {"https://management.core.windows.net/"})
                  .claims["appid"],
              kCertClient);
    // The v2 token endpoint's URL serves as the audience too, for the tenant the request names.
    EXPECT_EQ(
        service.grant(kBase, "adfs",
                      form(assertion(mine.private_pem,
                                     {{"aud", kBase + "/adfs/oauth2/v2.0/token"}})))["token_type"],
        "Bearer");
    EXPECT_EQ(refused_code(service, form(assertion(theirs.private_pem))), 700027);
    auto no_type = form(assertion(mine.private_pem));
    no_type.erase("client_assertion_type");
    EXPECT_EQ(refused_code(service, no_type), 900144);
    // A principal with a certificate and no secret is refused a secret; one with a secret only is
    // refused an assertion.
    auto with_secret = form("");
    with_secret.erase("client_assertion");
    with_secret["client_secret"] = "guess";
    EXPECT_EQ(refused_code(service, with_secret), 7000215);
    auto well_known = form(
        assertion(mine.private_pem, {{"iss", kWellKnownClientId}, {"sub", kWellKnownClientId}}));
    well_known["client_id"] = kWellKnownClientId;
    EXPECT_EQ(refused_code(service, well_known), 700027);
    // Both, given for one id, make one principal with both.
    ServicePrincipals merged(
        {parse_service_principal(std::string(kCertClient) + ":s3cret"), with_certificate});
    ASSERT_TRUE(merged.find(kCertClient));
    EXPECT_EQ(merged.find(kCertClient)->secret, "s3cret");
    EXPECT_TRUE(merged.find(kCertClient)->certificate);
    fs::remove_all(key_dir);
}

}  // namespace
}  // namespace bai::identity
