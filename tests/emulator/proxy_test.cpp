#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "emulator/proxy/azure_hosts.h"
#include "emulator/proxy/proxy_ca.h"
#include "emulator/tls/x509_building.h"
#include "tests/common/test_dir.h"

namespace bai::proxy {
namespace {

TEST(AzureHosts, EachServiceByItsHostName) {
    EXPECT_EQ(classify_host("management.azure.com").service, AzureService::arm);
    EXPECT_EQ(classify_host("Management.Azure.COM.").service, AzureService::arm);
    for (const char* authority : {"login.microsoftonline.com", "login.windows.net", "login.microsoft.com", "sts.windows.net"}) {
        EXPECT_EQ(classify_host(authority).service, AzureService::sign_in) << authority;
    }
    AzureHost blob = classify_host("acct1.blob.core.windows.net");
    EXPECT_EQ(blob.service, AzureService::blob);
    EXPECT_EQ(blob.account, "acct1");
    EXPECT_FALSE(blob.secondary);
    AzureHost secondary = classify_host("acct1-secondary.file.core.windows.net");
    EXPECT_EQ(secondary.service, AzureService::file);
    EXPECT_EQ(secondary.account, "acct1");
    EXPECT_TRUE(secondary.secondary);
    AzureHost batch = classify_host("mybatch.eastus.batch.azure.com");
    EXPECT_EQ(batch.service, AzureService::batch);
    EXPECT_EQ(batch.account, "mybatch");
}

TEST(AzureHosts, OtherNamesAreRefusedWithTheReason) {
    for (const char* host : {"example.com", "azure.com", "blob.core.windows.net", "ab.blob.core.windows.net",
                             "UPPER_case.blob.core.windows.net", "a.b.eastus.batch.azure.com", "x.queue.core.windows.net",
                             "mybatch.batch.azure.com", "evil.management.azure.com", "management.azure.com.evil.org", ""}) {
        AzureHost h = classify_host(host);
        EXPECT_EQ(h.service, AzureService::none) << host;
        EXPECT_FALSE(h.refusal.empty()) << host;
    }
    EXPECT_NE(classify_host("example.com").refusal.find("example.com"), std::string::npos);
    // Storage services the emulator lacks are Azure's names still: answered in the tunnel, saying so.
    AzureHost queue = classify_host("acct.queue.core.windows.net");
    EXPECT_EQ(queue.service, AzureService::unserved_storage);
    EXPECT_NE(queue.refusal.find("does not serve"), std::string::npos);
    EXPECT_TRUE(ca_may_sign(queue.host));
}

TEST(AzureHosts, AuthoritiesOfConnect) {
    auto a = parse_authority("Management.Azure.com:443");
    ASSERT_TRUE(a);
    EXPECT_EQ(a->host, "management.azure.com");
    EXPECT_EQ(a->port, 443);
    auto v6 = parse_authority("[::1]:8443");
    ASSERT_TRUE(v6);
    EXPECT_EQ(v6->host, "::1");
    EXPECT_EQ(v6->port, 8443);
    EXPECT_EQ(parse_authority("acct.blob.core.windows.net", 80)->port, 80);
    for (const char* bad : {"", ":443", "host:", "host:0", "host:65536", "host:44x", "host", "ho st:443", "h/x:443",
                            "[::1", "[::1]x", "[zz]:443", "host:443:1"}) {
        EXPECT_FALSE(parse_authority(bad)) << bad;
    }
}

std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

tls::X509Ptr parse_pem(const std::string& pem) {
    BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
    tls::X509Ptr cert(PEM_read_bio_X509(bio, nullptr, nullptr, nullptr));
    BIO_free(bio);
    return cert;
}

// Verifies `leaf` against the CA alone, for `host`: 0 when it holds, else OpenSSL's reason.
int verify(const std::string& ca_pem, const std::string& leaf_pem, const std::string& host) {
    tls::X509Ptr ca = parse_pem(ca_pem);
    tls::X509Ptr leaf = parse_pem(leaf_pem);
    X509_STORE* store = X509_STORE_new();
    X509_STORE_add_cert(store, ca.get());
    X509_STORE_CTX* ctx = X509_STORE_CTX_new();
    X509_STORE_CTX_init(ctx, store, leaf.get(), nullptr);
    X509_VERIFY_PARAM_set1_host(X509_STORE_CTX_get0_param(ctx), host.c_str(), host.size());
    X509_VERIFY_PARAM_set_flags(X509_STORE_CTX_get0_param(ctx), X509_V_FLAG_X509_STRICT);
    const int ok = X509_verify_cert(ctx);
    const int error = ok == 1 ? 0 : X509_STORE_CTX_get_error(ctx);
    X509_STORE_CTX_free(ctx);
    X509_STORE_free(store);
    return error;
}

TEST(ProxyCa, IsMadeOnceWithAPrivateKeyAndKeptAcrossStarts) {
    testing::TestDir dir;
    std::string first;
    {
        ProxyCa ca(dir / "proxy");
        first = ca.certificate_pem();
        EXPECT_EQ(slurp(ca.certificate_path()), first);
    }
    struct stat st {};
    ASSERT_EQ(::stat((dir / "proxy/ca-key.pem").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    ASSERT_EQ(::stat((dir / "proxy").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    ProxyCa again(dir / "proxy");
    EXPECT_EQ(again.certificate_pem(), first);
}

TEST(ProxyCa, ANameConstrainedCaThatIsNoOtherKeysCa) {
    testing::TestDir dir;
    ProxyCa ca(dir / "proxy");
    tls::X509Ptr cert = parse_pem(ca.certificate_pem());
    ASSERT_TRUE(cert);
    int critical = 0;
    auto* constraints = static_cast<NAME_CONSTRAINTS*>(X509_get_ext_d2i(cert.get(), NID_name_constraints, &critical, nullptr));
    ASSERT_NE(constraints, nullptr);
    EXPECT_EQ(critical, 1);
    EXPECT_EQ(sk_GENERAL_SUBTREE_num(constraints->permittedSubtrees), static_cast<int>(kPermittedDnsNameCount) + 5);
    NAME_CONSTRAINTS_free(constraints);
    EXPECT_EQ(X509_check_ca(cert.get()), 1);
}

TEST(ProxyCa, IssuesEachAzureNameACertificateThatVerifiesForItAlone) {
    testing::TestDir dir;
    ProxyCa ca(dir / "proxy");
    const std::string leaf = ca.issue_pem("acct1.blob.core.windows.net");
    EXPECT_EQ(verify(ca.certificate_pem(), leaf, "acct1.blob.core.windows.net"), 0);
    EXPECT_EQ(verify(ca.certificate_pem(), leaf, "acct2.blob.core.windows.net"), X509_V_ERR_HOSTNAME_MISMATCH);
    EXPECT_EQ(verify(ca.certificate_pem(), ca.issue_pem("management.azure.com"), "management.azure.com"), 0);
    EXPECT_EQ(verify(ca.certificate_pem(), ca.issue_pem("login.microsoftonline.com"), "login.microsoftonline.com"), 0);
    EXPECT_THROW(ca.issue_pem("example.com"), std::invalid_argument);
    EXPECT_THROW(ca.context_for("azure.com.example.org"), std::invalid_argument);
    EXPECT_TRUE(ca_may_sign("x.y.batch.azure.com"));
    EXPECT_TRUE(ca_may_sign("127.0.0.5"));
    EXPECT_FALSE(ca_may_sign("notmanagement.azure.com"));
    EXPECT_FALSE(ca_may_sign("10.0.0.1"));
}

TEST(ProxyCa, KeepsTheContextsOfTheNamesMostRecentlyServedOnly) {
    testing::TestDir dir;
    ProxyCa ca(dir / "proxy", 4);
    http::TlsContext first = ca.context_for("acct0.blob.core.windows.net");
    EXPECT_EQ(ca.context_for("ACCT0.blob.core.windows.net"), first);  // the same name, cached
    for (int i = 1; i < 1000; ++i) ca.context_for("acct" + std::to_string(i) + ".blob.core.windows.net");
    EXPECT_EQ(ca.cached(), 4u);
    EXPECT_NE(ca.context_for("acct0.blob.core.windows.net"), first);  // made again
}

TEST(ProxyCa, TheTrustBundleHasTheSystemsCasAndBothOfTheEmulators) {
    testing::TestDir dir;
    ProxyCa ca(dir / "proxy");
    {
        std::ofstream arm(dir / "arm.pem");
        arm << "-----BEGIN CERTIFICATE-----\nARM\n-----END CERTIFICATE-----\n";
    }
    const std::string bundle = slurp(write_trust_bundle(dir / "proxy", ca, dir / "arm.pem"));
    EXPECT_NE(bundle.find(ca.certificate_pem()), std::string::npos);
    EXPECT_NE(bundle.find("ARM"), std::string::npos);
    if (std::filesystem::exists("/etc/ssl/certs/ca-certificates.crt")) {
        EXPECT_EQ(bundle.find(slurp("/etc/ssl/certs/ca-certificates.crt")), 0u);
    }
}

}  // namespace
}  // namespace bai::proxy
