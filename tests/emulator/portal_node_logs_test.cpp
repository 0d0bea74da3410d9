// The portal's reads of a job's stdouterr on a node's own disk: what the job put there is shown
// and read, but never through a link it made (to a file, or to a directory), and never a fifo.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "emulator/portal/portal_node_logs.h"
#include "tests/common/test_dir.h"

namespace bai::portal {
namespace {

class NodeLogs : public ::testing::Test {
protected:
    void SetUp() override {
        root_ = dir_ / "stdouterr";
        std::filesystem::create_directories(root_ / "sub");
        std::ofstream(root_ / "stdout.txt") << "hello\n";
        std::ofstream(root_ / "sub" / "inner.log") << "inner";
        std::ofstream(dir_ / "secret") << "not the job's";
        std::filesystem::create_symlink(dir_ / "secret", root_ / "leak.txt");
        std::filesystem::create_directory_symlink(dir_.path(), root_ / "up");
        ASSERT_EQ(::mkfifo((root_ / "pipe").c_str(), 0600), 0);
    }
    bai::testing::TestDir dir_;
    std::filesystem::path root_;
};

TEST_F(NodeLogs, ListsDirectoriesAndRegularFilesOnly) {
    std::optional<nlohmann::json> items = list_node_logs(root_, ".", 100);
    ASSERT_TRUE(items);
    EXPECT_EQ(*items, (nlohmann::json::array({{{"name", "stdout.txt"}, {"directory", false}, {"size", 6}},
                                               {{"name", "sub"}, {"directory", true}, {"size", 0}}})));
    EXPECT_EQ(list_node_logs(root_, "sub", 100)->at(0)["name"], "inner.log");
    EXPECT_EQ(list_node_logs(root_, ".", 1)->size(), 1u);
}

TEST_F(NodeLogs, ReadsFromAnOffsetWithTheFilesSize) {
    std::optional<NodeLogRead> read = read_node_log(root_, "stdout.txt", 2, 2);
    ASSERT_TRUE(read);
    EXPECT_EQ(read->bytes, "ll");
    EXPECT_EQ(read->size, 6u);
    EXPECT_EQ(read_node_log(root_, "./sub/inner.log", 0, 100)->bytes, "inner");
    EXPECT_EQ(read_node_log(root_, "stdout.txt", 10, 100)->bytes, "");
}

TEST_F(NodeLogs, NeverFollowsALinkNorLeavesItsDirectory) {
    EXPECT_FALSE(read_node_log(root_, "leak.txt", 0, 100));
    EXPECT_FALSE(read_node_log(root_, "up/secret", 0, 100));
    EXPECT_FALSE(read_node_log(root_, "../secret", 0, 100));
    EXPECT_FALSE(read_node_log(root_, "/etc/passwd", 0, 100));
    EXPECT_FALSE(list_node_logs(root_, "up", 100));
    EXPECT_FALSE(list_node_logs(root_, "..", 100));
    EXPECT_FALSE(read_node_log(root_, "pipe", 0, 100));  // not opened: a fifo would wait for a writer
    EXPECT_FALSE(list_node_logs(dir_ / "gone", ".", 100));  // the node left
}

}  // namespace
}  // namespace bai::portal
