#include "fuse_mounts/manager/mount_table.h"

#include <gtest/gtest.h>

namespace bai::mounts {
namespace {

constexpr const char* kMountInfo =
    "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
    "40 22 0:50 / /data/nodes/c1/tvm-1/mounts/afs rw - fuse.bai bai rw\n"
    "41 40 0:51 / /data/nodes/c1/tvm-1/mounts/afs/inner rw - fuse.bai bai rw\n"
    "42 22 0:52 / /data/nodes/c1/tvm-1/mounts/with\\040space rw - fuse.bai bai rw\n"
    "43 22 0:53 / /data/nodes-other/x rw - fuse.bai bai rw\n";

TEST(MountTable, ParsesMountPointsAndDecodesEscapes) {
    auto points = parse_mount_points(kMountInfo);
    ASSERT_EQ(points.size(), 5u);
    EXPECT_EQ(points[0], "/");
    EXPECT_EQ(points[3], "/data/nodes/c1/tvm-1/mounts/with space");
}

TEST(MountTable, FuseConnectionsOfOurFilesystemsUnderARoot) {
    const std::string info = std::string(kMountInfo) +
                             "44 22 0:54 / /data/nodes/c1/tvm-1/mounts/other rw shared:7 - fuse.sshfs x rw\n"
                             "45 22 0:55 / /data/nodes/c1/tvm-1/mounts/share rw shared:8 master:2 - fuse.bai-share a/s rw\n";
    EXPECT_EQ(fuse_connections_under("/data/nodes", info), (std::vector<unsigned>{50, 51, 52, 55}));
    EXPECT_EQ(fuse_connections_under("/data/nodes/c1/tvm-1/mounts/share", info), (std::vector<unsigned>{55}));
    EXPECT_TRUE(fuse_connections_under("/elsewhere", info).empty());
}

TEST(MountTable, AFuseMountIsItsConnectionOnlyWhileMountedThere) {
    // A connection is aborted only while its mount point still shows it: once unmounted, its
    // number may be another mount's.
    EXPECT_TRUE(fuse_mount_at("/data/nodes/c1/tvm-1/mounts/afs", 50, kMountInfo));
    EXPECT_TRUE(fuse_mount_at("/data/nodes/c1/tvm-1/mounts/with space", 52, kMountInfo));
    EXPECT_FALSE(fuse_mount_at("/data/nodes/c1/tvm-1/mounts/afs", 51, kMountInfo));   // another's number
    EXPECT_FALSE(fuse_mount_at("/data/nodes/c1/tvm-1/mounts/gone", 50, kMountInfo));  // not mounted there
    EXPECT_FALSE(fuse_mount_at("/", 1, kMountInfo));                                   // 8:1, not 0:1
}

TEST(MountTable, FindsMountsUnderARootDeepestFirst) {
    auto found = mounts_under("/data/nodes", kMountInfo);
    ASSERT_EQ(found.size(), 3u);
    EXPECT_EQ(found[0], "/data/nodes/c1/tvm-1/mounts/afs/inner");
    // A sibling with the same prefix ("/data/nodes-other") is not below the root.
    for (const auto& p : found) EXPECT_EQ(p.find("nodes-other"), std::string::npos);
}

TEST(MountTable, TrailingSlashAndExactRootMatch) {
    EXPECT_EQ(mounts_under("/data/nodes/c1/tvm-1/mounts/afs/", kMountInfo).size(), 2u);
    EXPECT_TRUE(mounts_under("/nothing/here", kMountInfo).empty());
}

TEST(MountTable, IgnoresTruncatedLinesAndBadEscapes) {
    auto points = parse_mount_points("1 2\n5 6 0:1 / /a\\09x rw\n");
    ASSERT_EQ(points.size(), 1u);
    EXPECT_EQ(points[0], "/a\\09x");
}

TEST(MountTable, ReleasingUnderAnUnmountedDirectoryFailsNothing) {
    EXPECT_TRUE(release_mounts_under("/nonexistent-bai-root").empty());
}

}  // namespace
}  // namespace bai::mounts
