#include "common/endpoints/endpoints_file.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/common/test_dir.h"

namespace bai::endpoints {
namespace {

TEST(EndpointsFile, WritesTheDocumentedKeysAndReadsThemBack) {
    testing::TestDir dir;
    Endpoints e{"https://127.0.0.1:1", "http://127.0.0.1:2", "http://127.0.0.1:3", "/x/cert.pem", 42, "http://127.0.0.1:4"};
    write(dir / kFileName, e);
    std::ifstream in(dir / kFileName);
    auto doc = nlohmann::json::parse(in);
    EXPECT_EQ(doc, (nlohmann::json{{"arm", e.arm}, {"blob", e.blob}, {"file", e.file}, {"batch", e.batch},
                                   {"ca_cert", e.ca_cert}, {"pid", 42}}));
    auto back = read(dir / kFileName);
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(back->arm, e.arm);
    EXPECT_EQ(back->file, e.file);
    EXPECT_EQ(back->batch, e.batch);
    EXPECT_EQ(back->pid, 42);
    EXPECT_FALSE(std::filesystem::exists(dir / "endpoints.json.tmp"));
}

TEST(EndpointsFile, MissingFileIsNotAnError) {
    testing::TestDir dir;
    EXPECT_FALSE(read(dir / kFileName).has_value());
}

TEST(EndpointsFile, MalformedFileNamesTheFault) {
    testing::TestDir dir;
    std::ofstream(dir / kFileName) << R"({"arm": 5})";
    try {
        read(dir / kFileName);
        FAIL() << "no exception";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("\"arm\""), std::string::npos) << e.what();
    }
    std::ofstream(dir / kFileName, std::ios::trunc) << "{not json";
    EXPECT_THROW(read(dir / kFileName), std::runtime_error);
}

}  // namespace
}  // namespace bai::endpoints
