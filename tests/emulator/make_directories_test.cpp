// Directories made below a known one (make_directories.h): what create_directories would make,
// through links and levels already there, and its errors where a level is a file.
#include <gtest/gtest.h>

#include <fstream>

#include "emulator/engine/make_directories.h"
#include "tests/common/test_dir.h"

namespace bai::engine {
namespace {

namespace fs = std::filesystem;

TEST(MakeDirectoriesBelow, MakesEachMissingLevelBelowTheBase) {
    bai::testing::TestDir dir;
    std::error_code ec;
    make_directories_below(dir.path(), dir / "a/b/c/d", ec);
    EXPECT_FALSE(ec) << ec.message();
    EXPECT_TRUE(fs::is_directory(dir / "a/b/c/d"));
    // Again, and a sibling below levels that are there: nothing to say.
    make_directories_below(dir.path(), dir / "a/b/c/d", ec);
    EXPECT_FALSE(ec) << ec.message();
    make_directories_below(dir.path(), dir / "a/b/e", ec);
    EXPECT_FALSE(ec) << ec.message();
    EXPECT_TRUE(fs::is_directory(dir / "a/b/e"));
}

TEST(MakeDirectoriesBelow, GoesThroughALinkToADirectory) {
    bai::testing::TestDir dir;
    fs::create_directory(dir / "target");
    fs::create_directory_symlink(dir / "target", dir / "link");
    std::error_code ec;
    make_directories_below(dir.path(), dir / "link/x/y", ec);
    EXPECT_FALSE(ec) << ec.message();
    EXPECT_TRUE(fs::is_directory(dir / "target/x/y"));
    make_directories_below(dir.path(), dir / "link", ec);  // the link itself: a directory
    EXPECT_FALSE(ec) << ec.message();
}

TEST(MakeDirectoriesBelow, DotsAndLinksResolveAsTheSystemResolvesThem) {
    bai::testing::TestDir dir;
    fs::create_directories(dir / "base");
    fs::create_directories(dir / "away/target");
    fs::create_directory_symlink(dir / "away/target", dir / "base/link");
    std::error_code ec;
    // link/.. is the target's parent (away), not base: as create_directories makes it.
    make_directories_below(dir / "base", dir / "base/link/../x", ec);
    EXPECT_FALSE(ec) << ec.message();
    EXPECT_TRUE(fs::is_directory(dir / "away/x"));
    EXPECT_FALSE(fs::exists(dir / "base/x"));
    make_directories_below(dir / "base", dir / "base/a/b/", ec);  // a trailing separator
    EXPECT_FALSE(ec) << ec.message();
    EXPECT_TRUE(fs::is_directory(dir / "base/a/b"));
    fs::create_symlink(dir / "nowhere", dir / "base/dangling");
    make_directories_below(dir / "base", dir / "base/dangling/x", ec);
    EXPECT_TRUE(ec);  // (create_directories fails there too)
    EXPECT_FALSE(fs::exists(dir / "nowhere"));
}

TEST(MakeDirectoriesBelow, AFileInThePathIsAnErrorAsForCreateDirectories) {
    bai::testing::TestDir dir;
    std::ofstream(dir / "file") << "x";
    std::error_code ec;
    make_directories_below(dir.path(), dir / "file/sub", ec);
    EXPECT_EQ(ec, std::errc::not_a_directory);
    make_directories_below(dir.path(), dir / "file", ec);
    EXPECT_EQ(ec, std::errc::not_a_directory);
    std::error_code theirs;
    fs::create_directories(dir / "file", theirs);
    EXPECT_TRUE(theirs);  // (what create_directories says of it too)
}

TEST(MakeDirectoriesBelow, APathNotBelowTheBaseOrAMissingBaseIsMadeAsCreateDirectoriesMakesIt) {
    bai::testing::TestDir dir;
    fs::create_directory(dir / "base");
    std::error_code ec;
    make_directories_below(dir / "base", dir / "elsewhere/a", ec);
    EXPECT_FALSE(ec) << ec.message();
    EXPECT_TRUE(fs::is_directory(dir / "elsewhere/a"));
    make_directories_below(dir / "base", dir / "base/../up/a", ec);
    EXPECT_FALSE(ec) << ec.message();
    EXPECT_TRUE(fs::is_directory(dir / "up/a"));
    make_directories_below(dir / "missing", dir / "missing/a/b", ec);
    EXPECT_FALSE(ec) << ec.message();
    EXPECT_TRUE(fs::is_directory(dir / "missing/a/b"));
}

}  // namespace
}  // namespace bai::engine
