#include "emulator/tls/self_signed_cert.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "tests/common/test_dir.h"

namespace bai::tls {
namespace {

std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

TEST(SelfSignedCert, GeneratesACertificateForLoopbackNames) {
    testing::TestDir dir;
    CertificateFiles files = ensure_certificate(dir / "tls", "127.0.0.1");
    EXPECT_TRUE(certificate_covers(files.certificate, "127.0.0.1"));
    EXPECT_TRUE(certificate_covers(files.certificate, "localhost"));
    EXPECT_TRUE(certificate_covers(files.certificate, "::1"));
    EXPECT_FALSE(certificate_covers(files.certificate, "127.0.0.2"));
    EXPECT_FALSE(certificate_covers(files.certificate, "example.com"));
    struct stat st {};
    ASSERT_EQ(::stat(files.private_key.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST(SelfSignedCert, IsReusedOnTheNextStart) {
    testing::TestDir dir;
    CertificateFiles first = ensure_certificate(dir / "tls", "127.0.0.1");
    std::string pem = slurp(first.certificate);
    CertificateFiles second = ensure_certificate(dir / "tls", "localhost");
    EXPECT_EQ(slurp(second.certificate), pem);
}

TEST(SelfSignedCert, IsReplacedWhenItDoesNotCoverTheHost) {
    testing::TestDir dir;
    CertificateFiles first = ensure_certificate(dir / "tls", "127.0.0.1");
    std::string pem = slurp(first.certificate);
    CertificateFiles second = ensure_certificate(dir / "tls", "127.0.1.7");
    EXPECT_NE(slurp(second.certificate), pem);
    EXPECT_TRUE(certificate_covers(second.certificate, "127.0.1.7"));
    EXPECT_TRUE(certificate_covers(second.certificate, "127.0.0.1"));
}

TEST(SelfSignedCert, CoversEveryNameGivenAndIsReplacedWhenOneIsMissing) {
    testing::TestDir dir;
    CertificateFiles first = ensure_certificate(dir / "tls", "127.0.0.1");
    std::string pem = slurp(first.certificate);
    CertificateFiles second = ensure_certificate(dir / "tls", std::vector<std::string>{"127.0.0.1", "batchai"});
    EXPECT_NE(slurp(second.certificate), pem);
    EXPECT_TRUE(certificate_covers(second.certificate, "batchai"));
    EXPECT_TRUE(certificate_covers(second.certificate, "127.0.0.1"));
    EXPECT_FALSE(certificate_covers(second.certificate, "other"));
    // Both names covered: kept.
    pem = slurp(second.certificate);
    EXPECT_EQ(slurp(ensure_certificate(dir / "tls", std::vector<std::string>{"127.0.0.1", "batchai"}).certificate), pem);
}

TEST(SelfSignedCert, IsReplacedWhenCorrupt) {
    testing::TestDir dir;
    CertificateFiles first = ensure_certificate(dir / "tls", "127.0.0.1");
    std::ofstream(first.certificate, std::ios::trunc) << "garbage";
    CertificateFiles second = ensure_certificate(dir / "tls", "127.0.0.1");
    EXPECT_TRUE(certificate_covers(second.certificate, "127.0.0.1"));
}

}  // namespace
}  // namespace bai::tls
