// The portal's reads of a job's stdouterr on a node's own disk: what the job put there is shown
// and read, but never through a link it made (to a file, to a directory, or in place of a
// directory on the way from the node's root), never above the stdouterr directory, never a fifo.
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
        // The node's root (the anchor, the emulator's) and the job's directories under it.
        place_ = {dir_ / "node", "jobs/j1/stdouterr"};
        root_ = place_.anchor / place_.relative;
        std::filesystem::create_directories(root_ / "sub");
        std::filesystem::create_directories(place_.anchor / "jobs" / "other");
        std::ofstream(place_.anchor / "jobs" / "other" / "stdout.txt") << "another job's";
        std::ofstream(root_ / "stdout.txt") << "hello\n";
        std::ofstream(root_ / "sub" / "inner.log") << "inner";
        std::ofstream(dir_ / "secret") << "not the job's";
        std::filesystem::create_symlink(dir_ / "secret", root_ / "leak.txt");
        std::filesystem::create_directory_symlink(dir_.path(), root_ / "up");
        ASSERT_EQ(::mkfifo((root_ / "pipe").c_str(), 0600), 0);
    }
    bai::testing::TestDir dir_;
    NodeLogsPlace place_;
    std::filesystem::path root_;
};

TEST_F(NodeLogs, ListsDirectoriesAndRegularFilesOnly) {
    std::optional<nlohmann::json> items = list_node_logs(place_, ".", 100);
    ASSERT_TRUE(items);
    EXPECT_EQ(*items, (nlohmann::json::array({{{"name", "stdout.txt"}, {"directory", false}, {"size", 6}},
                                               {{"name", "sub"}, {"directory", true}, {"size", 0}}})));
    EXPECT_EQ(list_node_logs(place_, "sub", 100)->at(0)["name"], "inner.log");
    EXPECT_EQ(list_node_logs(place_, ".", 1)->size(), 1u);
}

TEST_F(NodeLogs, ReadsFromAnOffsetWithTheFilesSize) {
    std::optional<NodeLogRead> read = read_node_log(place_, "stdout.txt", 2, 2);
    ASSERT_TRUE(read);
    EXPECT_EQ(read->bytes, "ll");
    EXPECT_EQ(read->size, 6u);
    EXPECT_EQ(read_node_log(place_, "./sub/inner.log", 0, 100)->bytes, "inner");
    EXPECT_EQ(read_node_log(place_, "stdout.txt", 10, 100)->bytes, "");
}

TEST_F(NodeLogs, NeverFollowsALinkNorLeavesItsDirectory) {
    EXPECT_FALSE(read_node_log(place_, "leak.txt", 0, 100));
    EXPECT_FALSE(read_node_log(place_, "up/secret", 0, 100));
    EXPECT_FALSE(read_node_log(place_, "../secret", 0, 100));
    EXPECT_FALSE(read_node_log(place_, "/etc/passwd", 0, 100));
    EXPECT_FALSE(list_node_logs(place_, "up", 100));
    EXPECT_FALSE(list_node_logs(place_, "..", 100));
    EXPECT_FALSE(read_node_log(place_, "pipe", 0, 100));  // not opened: a fifo would wait for a writer
    EXPECT_FALSE(read_node_log(place_, "sub/../../other/stdout.txt", 0, 100));  // another job's
    EXPECT_FALSE(list_node_logs(place_, "sub/../..", 100));
    EXPECT_FALSE(list_node_logs({dir_ / "gone", "jobs"}, ".", 100));  // the node left
}

TEST_F(NodeLogs, ALinkInPlaceOfADirectoryOnTheWayIsNotFollowed) {
    // The job replaces its own job directory by a link to another directory holding "stdouterr".
    std::filesystem::create_directories(dir_ / "elsewhere" / "stdouterr");
    std::ofstream(dir_ / "elsewhere" / "stdouterr" / "stdout.txt") << "not the job's";
    std::filesystem::rename(place_.anchor / "jobs" / "j1", dir_ / "moved");
    std::filesystem::create_directory_symlink(dir_ / "elsewhere", place_.anchor / "jobs" / "j1");
    EXPECT_FALSE(read_node_log(place_, "stdout.txt", 0, 100));
    EXPECT_FALSE(list_node_logs(place_, ".", 100));
    // And the anchor itself as a link is refused too.
    std::filesystem::rename(place_.anchor, dir_ / "node-moved");
    std::filesystem::create_directory_symlink(dir_ / "node-moved", place_.anchor);
    EXPECT_FALSE(list_node_logs({place_.anchor, "jobs/other"}, ".", 100));
}

}  // namespace
}  // namespace bai::portal
