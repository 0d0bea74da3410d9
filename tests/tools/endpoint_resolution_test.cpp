#include "tools/bai/endpoint_resolution.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>

#include "tests/common/test_dir.h"

namespace bai::cli {
namespace {

class EndpointResolution : public ::testing::Test {
protected:
    void SetUp() override {
        ::unsetenv("BATCHAI_EMULATOR_ENDPOINT");
        ::unsetenv("BATCHAI_EMULATOR_CA_CERT");
    }
    void TearDown() override { SetUp(); }
};

TEST_F(EndpointResolution, FlagWinsOverEnvironment) {
    ::setenv("BATCHAI_EMULATOR_ENDPOINT", "https://127.0.0.1:2", 1);
    std::string reason;
    auto t = resolve_target({.endpoint = "https://127.0.0.1:1/"}, reason);
    ASSERT_TRUE(t.has_value()) << reason;
    EXPECT_EQ(t->endpoints.arm, "https://127.0.0.1:1");
    EXPECT_EQ(t->source, "--endpoint");
}

TEST_F(EndpointResolution, EnvironmentWhenNoFlag) {
    ::setenv("BATCHAI_EMULATOR_ENDPOINT", "https://127.0.0.1:2", 1);
    ::setenv("BATCHAI_EMULATOR_CA_CERT", "/ca.pem", 1);
    std::string reason;
    auto t = resolve_target({}, reason);
    ASSERT_TRUE(t.has_value()) << reason;
    EXPECT_EQ(t->endpoints.arm, "https://127.0.0.1:2");
    EXPECT_EQ(t->endpoints.ca_cert, "/ca.pem");
    EXPECT_FALSE(t->from_file);
}

TEST_F(EndpointResolution, LocationReadsEndpointsJson) {
    testing::TestDir dir;
    endpoints::write(dir / "endpoints.json",
                     {"https://127.0.0.1:5", "http://127.0.0.1:6", "http://127.0.0.1:7", "/c.pem", 9});
    ::setenv("BATCHAI_EMULATOR_ENDPOINT", "https://127.0.0.1:2", 1);  // --location wins
    std::string reason;
    auto t = resolve_target({.location = dir.path()}, reason);
    ASSERT_TRUE(t.has_value()) << reason;
    EXPECT_EQ(t->endpoints.blob, "http://127.0.0.1:6");
    EXPECT_EQ(t->endpoints.ca_cert, "/c.pem");
    EXPECT_TRUE(t->from_file);
    auto overridden = resolve_target({.location = dir.path(), .ca_cert = "/mine.pem"}, reason);
    EXPECT_EQ(overridden->endpoints.ca_cert, "/mine.pem");
}

TEST_F(EndpointResolution, NoEndpointsFileMeansNotRunning) {
    testing::TestDir dir;
    std::string reason;
    EXPECT_FALSE(resolve_target({.location = dir.path()}, reason).has_value());
    EXPECT_NE(reason.find("not running"), std::string::npos) << reason;
}

TEST_F(EndpointResolution, MalformedEndpointsFileIsReported) {
    testing::TestDir dir;
    std::ofstream(dir / "endpoints.json") << "[]";
    std::string reason;
    EXPECT_FALSE(resolve_target({.location = dir.path()}, reason).has_value());
    EXPECT_NE(reason.find("endpoints.json"), std::string::npos) << reason;
}

}  // namespace
}  // namespace bai::cli
