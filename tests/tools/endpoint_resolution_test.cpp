#include "tools/bai/endpoint_resolution.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "common/endpoints/user_pointer.h"
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

// Surroundings where nothing is found unless a test puts it there.
Surroundings nothing_around(const testing::TestDir& dir, std::vector<std::string>* probed = nullptr) {
    return Surroundings{.working_data_dir = dir / "batchai-data",
                        .pointers = {dir / "runtime-pointer", dir / "home-pointer"},
                        .default_arm = "https://127.0.0.1:10443",
                        .answers = [probed](const std::string& arm) {
                            if (probed) probed->push_back(arm);
                            return false;
                        }};
}

long a_dead_pid() {
    pid_t child = ::fork();
    if (child == 0) ::_exit(0);
    ::waitpid(child, nullptr, 0);
    return child;
}

TEST_F(EndpointResolution, WorkingDirectoryFirst) {
    testing::TestDir dir;
    std::filesystem::create_directories(dir / "batchai-data");
    endpoints::write(dir / "batchai-data" / "endpoints.json",
                     {"https://127.0.0.1:5", "http://127.0.0.1:6", "http://127.0.0.1:7", "/c.pem", ::getpid()});
    std::string reason;
    auto t = resolve_target({}, reason, nothing_around(dir));
    ASSERT_TRUE(t.has_value()) << reason;
    EXPECT_EQ(t->endpoints.arm, "https://127.0.0.1:5");
    EXPECT_TRUE(t->from_file);
}

TEST_F(EndpointResolution, PointerOfARunningEmulatorFromAnyDirectory) {
    testing::TestDir dir;
    std::filesystem::create_directories(dir / "data");
    endpoints::write(dir / "data" / "endpoints.json",
                     {"https://127.0.0.1:5", "http://127.0.0.1:6", "http://127.0.0.1:7", "/c.pem", ::getpid()});
    endpoints::publish_pointer(dir / "home-pointer", dir / "data" / "endpoints.json");
    std::vector<std::string> probed;
    std::string reason;
    auto t = resolve_target({}, reason, nothing_around(dir, &probed));
    ASSERT_TRUE(t.has_value()) << reason;
    EXPECT_EQ(t->endpoints.arm, "https://127.0.0.1:5");
    EXPECT_EQ(t->endpoints.ca_cert, "/c.pem");
    EXPECT_TRUE(t->from_file);
    // Says where the emulator was found: its data directory, and through which pointer.
    EXPECT_NE(t->source.find((dir / "data" / "endpoints.json").string()), std::string::npos) << t->source;
    EXPECT_NE(t->source.find((dir / "home-pointer").string()), std::string::npos) << t->source;
    EXPECT_TRUE(probed.empty());
}

TEST_F(EndpointResolution, StalePointersArePassedOver) {
    testing::TestDir dir;
    std::filesystem::create_directories(dir / "dead");
    endpoints::write(dir / "dead" / "endpoints.json",
                     {"https://127.0.0.1:5", "http://127.0.0.1:6", "http://127.0.0.1:7", "/c.pem", a_dead_pid()});
    endpoints::publish_pointer(dir / "runtime-pointer", dir / "dead" / "endpoints.json");
    // A pointer whose emulator stopped cleanly: its endpoints file is gone.
    endpoints::publish_pointer(dir / "home-pointer", dir / "gone" / "endpoints.json");
    std::vector<std::string> probed;
    std::string reason;
    EXPECT_FALSE(resolve_target({}, reason, nothing_around(dir, &probed)).has_value());
    EXPECT_EQ(probed, std::vector<std::string>{"https://127.0.0.1:10443"});
    EXPECT_NE(reason.find("not running"), std::string::npos) << reason;
    EXPECT_NE(reason.find("earlier run"), std::string::npos) << reason;
    EXPECT_NE(reason.find("tools/run"), std::string::npos) << reason;
}

TEST_F(EndpointResolution, DefaultEndpointWhenItAnswers) {
    testing::TestDir dir;
    Surroundings around = nothing_around(dir);
    around.answers = [](const std::string& arm) { return arm == "https://127.0.0.1:10443"; };
    std::string reason;
    auto t = resolve_target({}, reason, around);
    ASSERT_TRUE(t.has_value()) << reason;
    EXPECT_EQ(t->endpoints.arm, "https://127.0.0.1:10443");
    EXPECT_FALSE(t->from_file);  // the storage endpoints are asked of ARM
    EXPECT_NE(t->source.find("default"), std::string::npos) << t->source;
}

TEST_F(EndpointResolution, DataDirFlagLooksNowhereElse) {
    testing::TestDir dir;
    std::filesystem::create_directories(dir / "data");
    endpoints::write(dir / "data" / "endpoints.json",
                     {"https://127.0.0.1:5", "http://127.0.0.1:6", "http://127.0.0.1:7", "/c.pem", ::getpid()});
    endpoints::publish_pointer(dir / "home-pointer", dir / "data" / "endpoints.json");
    std::vector<std::string> probed;
    std::string reason;
    EXPECT_FALSE(resolve_target({.location = dir / "empty"}, reason, nothing_around(dir, &probed)).has_value());
    EXPECT_TRUE(probed.empty());
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
