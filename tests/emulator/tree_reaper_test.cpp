// Directory trees removed off the caller's thread (tree_reaper.h): gone from their path at once,
// gone for good once drained, and a path that cannot be renamed removed where it is.
#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>

#include "emulator/engine/tree_reaper.h"

namespace bai::engine {
namespace {

namespace fs = std::filesystem;

fs::path make_tree(const fs::path& root, int files) {
    fs::create_directories(root / "jobs" / "a" / "stdouterr");
    for (int i = 0; i < files; ++i) std::ofstream(root / "jobs" / "a" / "stdouterr" / ("f" + std::to_string(i))) << i;
    return root;
}

TEST(TreeReaper, ATreeLeavesItsPathAtOnceAndIsGoneOnceDrained) {
    char pattern[] = "/tmp/bai-reaper-XXXXXX";
    const fs::path dir = ::mkdtemp(pattern);
    {
        TreeReaper reaper(dir / ".reaped");
        for (int n = 0; n < 20; ++n) {
            const fs::path node = make_tree(dir / "cluster" / ("node" + std::to_string(n)), 50);
            reaper.remove(node);
            EXPECT_FALSE(fs::exists(node)) << node;
            // A new directory at the same path never meets the old one's files.
            make_tree(node, 1);
            EXPECT_FALSE(fs::exists(node / "jobs" / "a" / "stdouterr" / "f1"));
            fs::remove_all(node);
        }
        reaper.drain();
        EXPECT_TRUE(fs::is_empty(dir / ".reaped"));
        reaper.remove(dir / "no-such-tree");  // nothing to do, nothing thrown
        reaper.remove(make_tree(dir / "last", 200));
    }  // the destructor finishes the queue
    EXPECT_TRUE(fs::is_empty(dir / ".reaped"));
    EXPECT_FALSE(fs::exists(dir / "last"));
    fs::remove_all(dir);
}

}  // namespace
}  // namespace bai::engine
