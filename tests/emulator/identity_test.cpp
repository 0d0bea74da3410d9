// The sign-in service: service principals, the signing key, the token endpoint's grants and refusals.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <jwt/jwt.hpp>

#include "common/crypto/base64.h"
#include "emulator/identity/service_principals.h"
#include "emulator/identity/signing_key.h"
#include "emulator/identity/token_service.h"
#include "emulator/identity/user_sign_in.h"

namespace bai::identity {
namespace {

namespace fs = std::filesystem;

class TempDir {
public:
    TempDir() {
        char pattern[] = "/tmp/bai-identity-XXXXXX";
        path_ = ::mkdtemp(pattern);
    }
    ~TempDir() { fs::remove_all(path_); }
    const fs::path& path() const { return path_; }

private:
    fs::path path_;
};

TEST(ServicePrincipals, ParsesIdAndSecretAndRefusesTheRest) {
    ServicePrincipal p = parse_service_principal("0f0f0f0f-1111-4222-8333-444444444444:a:secret:with:colons");
    EXPECT_EQ(p.client_id, "0f0f0f0f-1111-4222-8333-444444444444");
    EXPECT_EQ(p.secret, "a:secret:with:colons");
    for (const char* bad : {"no-colon", "not-a-guid:secret", "0f0f0f0f-1111-4222-8333-444444444444:",
                            "0f0f0f0f-1111-4222-8333-44444444444g:x"}) {
        EXPECT_THROW(parse_service_principal(bad), std::invalid_argument) << bad;
    }
}

TEST(ServicePrincipals, TheWellKnownOneAndMoreByIdInAnyCase) {
    ServicePrincipals principals(std::vector<ServicePrincipal>{{"0F0F0F0F-1111-4222-8333-444444444444", "one"},
                                  {"0f0f0f0f-1111-4222-8333-444444444444", "two"}});
    ASSERT_TRUE(principals.find(kWellKnownClientId));
    EXPECT_EQ(principals.find(kWellKnownClientId)->secret, kWellKnownClientSecret);
    ASSERT_TRUE(principals.find("0f0f0f0f-1111-4222-8333-444444444444"));
    EXPECT_EQ(principals.find("0F0F0F0F-1111-4222-8333-444444444444")->secret, "two");  // the later one
    EXPECT_FALSE(principals.find("11111111-1111-4111-8111-111111111111"));
}

TEST(ServicePrincipals, ObjectIdsAreStableGuidsOfTheirOwn) {
    const std::string a = object_id_of(kWellKnownClientId);
    EXPECT_TRUE(is_guid(a));
    EXPECT_EQ(a, object_id_of(std::string(kWellKnownClientId)));
    EXPECT_NE(a, object_id_of("0f0f0f0f-1111-4222-8333-444444444444"));
    EXPECT_NE(a, kWellKnownClientId);
}

TEST(SigningKey, MadeOncePrivateAndPublishedAsAJwk) {
    TempDir dir;
    SigningKey first = load_or_create_signing_key(dir.path() / "identity");
    struct stat st{};
    ASSERT_EQ(::stat((dir.path() / "identity" / "signing-key.pem").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    SigningKey again = load_or_create_signing_key(dir.path() / "identity");
    EXPECT_EQ(first.key_id, again.key_id);
    EXPECT_EQ(first.jwk["kty"], "RSA");
    EXPECT_EQ(first.jwk["kid"], first.key_id);
    EXPECT_EQ(first.jwk["e"], "AQAB");
    EXPECT_EQ(first.jwk["n"].get<std::string>().size(), 342u);  // 2048 bits in base64url
    EXPECT_EQ(base64url(std::string("\xfb\xff", 2)), "-_8");
}

TEST(SigningKey, MadeWhenATokenServiceFirstNeedsIt) {
    TempDir dir;
    int made = 0;
    TokenService service([&] { return ++made, load_or_create_signing_key(dir.path()); }, ServicePrincipals());
    EXPECT_EQ(made, 0);  // a run that never signs in makes no key
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "signing-key.pem"));
    const nlohmann::json keys = service.keys();
    EXPECT_EQ(made, 1);
    const std::string token = service.issue("https://127.0.0.1:10443", "adfs", *ServicePrincipals().find(kWellKnownClientId),
                                            "https://management.core.windows.net/", std::chrono::system_clock::now());
    EXPECT_EQ(made, 1);
    EXPECT_EQ(keys["keys"][0]["kid"], load_or_create_signing_key(dir.path()).key_id);  // the one kept
    EXPECT_EQ(service.verify(token, {"https://management.core.windows.net/"}).check, TokenCheck::valid);
}

class TokenServiceTest : public ::testing::Test {
protected:
    TempDir dir;
    SigningKey key = load_or_create_signing_key(dir.path());
    TokenService service{key, ServicePrincipals(std::vector<ServicePrincipal>{{"0f0f0f0f-1111-4222-8333-444444444444", "other"}})};
    const std::string base = "https://127.0.0.1:10443";

    std::map<std::string, std::string> form(std::map<std::string, std::string> change = {}) {
        std::map<std::string, std::string> f{{"grant_type", "client_credentials"},
                                             {"client_id", kWellKnownClientId},
                                             {"client_secret", kWellKnownClientSecret},
                                             {"scope", "https://management.core.windows.net//.default"}};
        for (auto& [k, v] : change) f[k] = v;
        return f;
    }
    SignInError refusal(const std::string& tenant, const std::map<std::string, std::string>& fields) {
        try {
            service.grant(base, tenant, fields);
        } catch (const SignInError& e) {
            return e;
        }
        ADD_FAILURE() << "granted";
        return {};
    }
};

TEST_F(TokenServiceTest, GrantsASignedTokenWithTheCloudsClaims) {
    nlohmann::json answer = service.grant(base, "adfs", form());
    EXPECT_EQ(answer["token_type"], "Bearer");
    EXPECT_EQ(answer["expires_in"], 3599);
    std::error_code ec;
    using namespace jwt::params;
    auto decoded = jwt::decode(answer["access_token"].get<std::string>(), algorithms({"RS256"}), ec,
                               secret(key.public_pem), verify(true));
    ASSERT_FALSE(ec) << ec.message();
    const nlohmann::json claims = nlohmann::json::parse(decoded.payload().create_json_obj().dump());
    EXPECT_EQ(claims["aud"], "https://management.core.windows.net/");
    EXPECT_EQ(claims["iss"], base + "/adfs");
    EXPECT_EQ(claims["appid"], kWellKnownClientId);
    EXPECT_EQ(claims["tid"], kTenantId);
    EXPECT_EQ(claims["oid"], object_id_of(kWellKnownClientId));
    EXPECT_EQ(claims["exp"].get<long>() - claims["iat"].get<long>(), 3599);
    EXPECT_EQ(decoded.header().create_json_obj()["kid"], key.key_id);
    // The key signs; a token signed with HMAC over the public key (the algorithm confusion
    // attack) is not one of its tokens.
    jwt::jwt_object forged{algorithm("HS256"), secret(key.public_pem), payload({{"aud", "x"}})};
    jwt::decode(forged.signature(), algorithms({"RS256"}), ec, secret(key.public_pem), verify(true));
    EXPECT_TRUE(ec);
    // A v1 client names the resource; the tenant id serves as well as adfs.
    nlohmann::json v1 = service.grant(base, kTenantId,
                                      form({{"scope", ""}, {"resource", "https://batch.core.windows.net/"}}));
    EXPECT_EQ(v1["resource"], "https://batch.core.windows.net/");
    EXPECT_EQ(service.grant(base, "adfs", form({{"client_id", "0F0F0F0F-1111-4222-8333-444444444444"},
                                                {"client_secret", "other"}}))["token_type"],
              "Bearer");
}

TEST_F(TokenServiceTest, RefusalsAreTheSignInServices) {
    struct Case {
        std::string tenant;
        std::map<std::string, std::string> change;
        int status;
        std::string error;
        int code;
    };
    for (const Case& c : std::vector<Case>{
             {"adfs", {{"client_secret", "wrong"}}, 401, "invalid_client", 7000215},
             {"adfs", {{"client_secret", ""}}, 401, "invalid_client", 7000218},
             {"adfs", {{"client_id", "11111111-1111-4111-8111-111111111111"}}, 400, "unauthorized_client", 700016},
             {"adfs", {{"client_id", ""}}, 400, "invalid_request", 900144},
             {"adfs", {{"grant_type", "password"}}, 400, "unsupported_grant_type", 70003},
             {"adfs", {{"scope", "https://management.core.windows.net/"}}, 400, "invalid_scope", 1002012},
             {"adfs", {{"scope", "/.default"}}, 400, "invalid_scope", 1002012},
             {"adfs", {{"scope", "a/.default b/.default"}}, 400, "invalid_scope", 1002012},
             {"adfs", {{"scope", ""}}, 400, "invalid_request", 900144},
             {"contoso", {}, 400, "invalid_tenant", 90002}}) {
        SignInError e = refusal(c.tenant, form(c.change));
        EXPECT_EQ(e.status, c.status) << c.error;
        EXPECT_EQ(e.error, c.error);
        EXPECT_EQ(e.code, c.code) << e.description;
    }
    EXPECT_THROW(service.openid_configuration(base, "contoso"), SignInError);
    EXPECT_EQ(service.openid_configuration(base, "adfs")["token_endpoint"], base + "/adfs/oauth2/token");
    EXPECT_EQ(service.keys()["keys"][0]["kid"], key.key_id);
}

TEST_F(TokenServiceTest, VerifiesItsOwnTokensOnly) {
    const std::vector<std::string> arm{"https://management.core.windows.net/"};
    const auto now = std::chrono::system_clock::now();
    const ServicePrincipal principal{kWellKnownClientId, kWellKnownClientSecret};
    const std::string token = service.issue(base, "adfs", principal, "https://management.core.windows.net/", now);
    EXPECT_EQ(service.verify(token, arm).check, TokenCheck::valid);
    EXPECT_EQ(service.verify(token, {"https://batch.core.windows.net/"}).check, TokenCheck::wrong_audience);
    const std::string old = service.issue(base, "adfs", principal, "https://management.core.windows.net/",
                                          now - std::chrono::hours(2));
    TokenVerdict expired = service.verify(old, arm);
    EXPECT_EQ(expired.check, TokenCheck::expired);
    EXPECT_EQ(expired.claims["aud"], "https://management.core.windows.net/");
    // Within the five minutes' leeway an expired token still serves.
    const std::string just = service.issue(base, "adfs", principal, "https://management.core.windows.net/",
                                           now - TokenService::kLifetime - std::chrono::seconds(60));
    EXPECT_EQ(service.verify(just, arm).check, TokenCheck::valid);
    // Another service's key, HMAC over the public key, no signature, garbage: invalid.
    TempDir other_dir;
    TokenService other{load_or_create_signing_key(other_dir.path()), ServicePrincipals()};
    EXPECT_EQ(service.verify(other.issue(base, "adfs", principal, "https://management.core.windows.net/", now), arm).check,
              TokenCheck::invalid);
    using namespace jwt::params;
    jwt::jwt_object forged{algorithm("HS256"), secret(key.public_pem),
                           payload({{"aud", "https://management.core.windows.net/"}})};
    forged.add_claim("exp", std::chrono::system_clock::now() + std::chrono::hours(1));
    EXPECT_EQ(service.verify(forged.signature(), arm).check, TokenCheck::invalid);
    const std::string unsigned_token = token.substr(0, token.rfind('.') + 1);
    EXPECT_EQ(service.verify(unsigned_token, arm).check, TokenCheck::invalid);
    // Bytes over 0x7f made cpp-jwt's base64 decoder read outside its table: refused before it.
    for (const char* garbage : {"", "a.b.c", "...", "eyJhbGciOiJub25lIn0.e30.", "\xff\xfe.e30.x",
                                "eyJhbGciOiJSUzI1NiJ9.\x80\x81.sig", "a~b.c+d.e/f", "a.b.c.d"}) {
        EXPECT_EQ(service.verify(garbage, arm).check, TokenCheck::invalid) << garbage;
    }
}

nlohmann::json claims_of(const std::string& token) {
    const size_t first = token.find('.');
    const std::string payload = token.substr(first + 1, token.find('.', first + 1) - first - 1);
    std::string padded = payload;
    for (char& c : padded) c = c == '-' ? '+' : c == '_' ? '/' : c;
    while (padded.size() % 4 != 0) padded += '=';
    return nlohmann::json::parse(*crypto::base64_decode(padded));
}

TEST_F(TokenServiceTest, ADeviceCodeSignsInTheWellKnownUserAtOnce) {
    const std::string az = "04b07795-8ddb-461a-bbee-02f9e1bf7b46";
    const std::string cloud = "https://login.microsoftonline.com";
    nlohmann::json flow = start_device_flow(service, cloud, "organizations",
                                            {{"client_id", az}, {"scope", "https://management.core.windows.net//.default offline_access openid profile"}});
    EXPECT_EQ(flow["user_code"], "EMULATOR");
    EXPECT_NE(flow["message"].get<std::string>().find(kWellKnownUserName), std::string::npos);
    // MSAL redeems it without the scopes: those of the flow count.
    nlohmann::json tokens = service.grant(cloud, "organizations",
                                          {{"grant_type", kDeviceCodeGrant}, {"client_id", az}, {"device_code", flow["device_code"]},
                                           {"client_info", "1"}});
    const nlohmann::json access = claims_of(tokens["access_token"]);
    EXPECT_EQ(access["aud"], "https://management.core.windows.net/");
    EXPECT_EQ(access["upn"], kWellKnownUserName);
    EXPECT_EQ(access["oid"], well_known_user_object_id());
    EXPECT_EQ(access["tid"], kTenantId);
    EXPECT_EQ(service.verify(tokens["access_token"], {"https://management.core.windows.net/"}).check, TokenCheck::valid);
    const nlohmann::json id = claims_of(tokens["id_token"]);
    EXPECT_EQ(id["aud"], az);
    EXPECT_EQ(id["preferred_username"], kWellKnownUserName);
    EXPECT_FALSE(tokens["client_info"].get<std::string>().empty());
    // The refresh token gets a token for another resource, for the same client only.
    nlohmann::json batch = service.grant(cloud, kTenantId,
                                         {{"grant_type", "refresh_token"}, {"client_id", az}, {"refresh_token", tokens["refresh_token"]},
                                          {"scope", "https://batch.core.windows.net//.default"}});
    EXPECT_EQ(claims_of(batch["access_token"])["aud"], "https://batch.core.windows.net/");
    auto refused = [&](std::map<std::string, std::string> fields) {
        try {
            service.grant(cloud, "organizations", fields);
        } catch (const SignInError& e) {
            return e.error;
        }
        return std::string("granted");
    };
    EXPECT_EQ(refused({{"grant_type", "refresh_token"}, {"client_id", "0f0f0f0f-1111-4222-8333-444444444444"},
                       {"refresh_token", tokens["refresh_token"]}, {"scope", "x/.default"}}), "invalid_grant");
    // A client id is a GUID (an id token's audience is never a resource's, no control characters).
    EXPECT_EQ(refused({{"grant_type", "refresh_token"}, {"client_id", "https://management.azure.com/"},
                       {"refresh_token", tokens["refresh_token"]}, {"scope", "x/.default"}}), "unauthorized_client");
    // No client gets a token whose audience is one of the service's own flow tokens'.
    EXPECT_EQ(refused({{"grant_type", "client_credentials"}, {"client_id", kWellKnownClientId},
                       {"client_secret", kWellKnownClientSecret}, {"resource", "urn:batchai-emulator:refresh-token"}}),
              "invalid_resource");
    EXPECT_EQ(refused({{"grant_type", "refresh_token"}, {"client_id", az}, {"refresh_token", tokens["refresh_token"]},
                       {"scope", "urn:batchai-emulator:device-code/.default"}}), "invalid_resource");
    EXPECT_EQ(refused({{"grant_type", kDeviceCodeGrant}, {"client_id", az}, {"device_code", tokens["access_token"]}}), "invalid_grant");
    EXPECT_EQ(refused({{"grant_type", kDeviceCodeGrant}, {"client_id", az}, {"device_code", "not.a.token"}}), "invalid_grant");
    EXPECT_EQ(refused({{"grant_type", kDeviceCodeGrant}, {"client_id", az}}), "invalid_request");
    // A v1 client (ADAL) names the resource and gets no id token.
    nlohmann::json v1_flow = start_device_flow(service, cloud, kTenantId, {{"client_id", az}, {"resource", "https://management.core.windows.net/"}});
    nlohmann::json v1 = service.grant(cloud, kTenantId, {{"grant_type", kDeviceCodeGrant}, {"client_id", az}, {"code", v1_flow["device_code"]},
                                                         {"resource", "https://management.core.windows.net/"}});
    EXPECT_EQ(v1["resource"], "https://management.core.windows.net/");
    EXPECT_FALSE(v1.contains("id_token"));
    EXPECT_EQ(service.openid_configuration(cloud, "organizations", true)["device_authorization_endpoint"],
              cloud + "/organizations/oauth2/v2.0/devicecode");
    // Under --strict-auth the user signs in not at all: no secret is asked of a device code.
    service.refuse_user_sign_in();
    EXPECT_THROW(start_device_flow(service, cloud, "organizations", {{"client_id", az}, {"scope", "x/.default"}}), SignInError);
    EXPECT_EQ(refused({{"grant_type", "refresh_token"}, {"client_id", az}, {"refresh_token", tokens["refresh_token"]},
                       {"scope", "x/.default"}}), "unauthorized_client");
}

TEST(TokenForm, DecodesFieldsAndRefusesBadEscapes) {
    auto fields = parse_form("a=1&b=x+y%2Fz&a=2&&empty=&flag");
    EXPECT_EQ(fields["a"], "1");
    EXPECT_EQ(fields["b"], "x y/z");
    EXPECT_EQ(fields["empty"], "");
    EXPECT_EQ(fields.count("flag"), 1u);
    EXPECT_TRUE(parse_form("").empty());
    EXPECT_THROW(parse_form("a=%zz"), SignInError);
    EXPECT_THROW(parse_form("%4=1"), SignInError);
    EXPECT_THROW(parse_form("scope=%FF%2F.default"), SignInError);  // not UTF-8: no JSON could carry it
}

}  // namespace
}  // namespace bai::identity
