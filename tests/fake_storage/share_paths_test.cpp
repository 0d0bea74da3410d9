// Removing a tree beneath a directory that writers share (share_paths.h: remove_tree_in_share):
// everything under the name goes, nothing a link leads to does, and a link in place of a
// directory on the way stops it.
#include "fake_storage/engine/share_paths.h"

#include <gtest/gtest.h>

#include <fstream>

#include "tests/common/test_dir.h"

namespace bai::storage {
namespace {

namespace fs = std::filesystem;

class RemoveTree : public ::testing::Test {
protected:
    void SetUp() override {
        root_ = dir_ / "root";
        fs::create_directories(root_ / "wd" / "out" / "deep");
        std::ofstream(root_ / "wd" / "out" / "deep" / "f") << "x";
        std::ofstream(root_ / "wd" / "top") << "y";
        fs::create_directories(dir_ / "outside");
        std::ofstream(dir_ / "outside" / "keep") << "keep";
        fs::create_directory_symlink(dir_ / "outside", root_ / "wd" / "out" / "link");
    }
    bai::testing::TestDir dir_;
    fs::path root_;
};

TEST_F(RemoveTree, RemovesEverythingUnderTheNameAndNothingALinkLeadsTo) {
    EXPECT_TRUE(remove_tree_in_share(root_, "wd/out"));
    EXPECT_FALSE(fs::exists(root_ / "wd" / "out"));
    EXPECT_TRUE(fs::exists(root_ / "wd" / "top"));
    EXPECT_TRUE(fs::exists(dir_ / "outside" / "keep"));  // the link went, not what it led to
    EXPECT_TRUE(remove_tree_in_share(root_, "wd/top"));   // a file
    EXPECT_FALSE(fs::exists(root_ / "wd" / "top"));
}

TEST_F(RemoveTree, ALinkInPlaceOfADirectoryOnTheWayStopsIt) {
    fs::rename(root_ / "wd", dir_ / "moved");
    fs::create_directory_symlink(dir_ / "outside", root_ / "wd");
    EXPECT_FALSE(remove_tree_in_share(root_, "wd/keep"));
    EXPECT_TRUE(fs::exists(dir_ / "outside" / "keep"));
    EXPECT_FALSE(remove_tree_in_share(root_, "../outside"));
    EXPECT_TRUE(fs::exists(dir_ / "outside" / "keep"));
    EXPECT_FALSE(remove_tree_in_share(root_, ""));  // never the root itself
    EXPECT_TRUE(fs::exists(root_));
}

}  // namespace
}  // namespace bai::storage
