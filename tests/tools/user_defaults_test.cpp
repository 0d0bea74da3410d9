#include "tools/bai/user_defaults.h"

#include <gtest/gtest.h>

#include <fstream>

#include "tests/common/test_dir.h"
#include "tools/bai/cli_error.h"

namespace bai::cli {
namespace {

TEST(UserDefaults, SavedValuesLoadBackAndEmptyValuesUnset) {
    bai::testing::TestDir dir;
    auto file = dir / "nested/config";
    EXPECT_TRUE(UserDefaults::load(file).values().empty());  // no file: no defaults
    UserDefaults d;
    d.set("group", "rg");
    d.set("workspace", "ws");
    d.save(file);
    UserDefaults loaded = UserDefaults::load(file);
    EXPECT_EQ(loaded.get("group"), "rg");
    EXPECT_EQ(loaded.get("workspace"), "ws");
    loaded.set("group", "");
    loaded.save(file);
    EXPECT_FALSE(UserDefaults::load(file).get("group").has_value());
    EXPECT_EQ(UserDefaults::load(file).get("workspace"), "ws");
}

TEST(UserDefaults, OnlyTheDefaultsSectionCountsAndBadLinesNameTheLine) {
    bai::testing::TestDir dir;
    auto file = dir / "config";
    std::ofstream(file) << "# comment\n[core]\ngroup = other\n[defaults]\n group = rg \n";
    EXPECT_EQ(UserDefaults::load(file).get("group"), "rg");
    std::ofstream(file) << "[defaults]\ngroup = rg\nno equals sign\n";
    try {
        UserDefaults::load(file);
        ADD_FAILURE();
    } catch (const CliError& e) {
        EXPECT_NE(std::string(e.what()).find("config:3"), std::string::npos) << e.what();
    }
}

TEST(UserDefaults, KnownKeys) {
    for (const char* key : {"group", "workspace", "experiment", "location", "subscription"}) {
        EXPECT_TRUE(UserDefaults::known_key(key));
    }
    EXPECT_FALSE(UserDefaults::known_key("cluster"));
}

}  // namespace
}  // namespace bai::cli
