// The share filesystem through the kernel: POSIX behaviour of each operation, and coherence with
// the store that the File REST API serves (both ways). Needs /dev/fuse and the right to mount.
#include "fuse_mounts/share/share_fs.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <chrono>
#include <thread>

#include "fake_storage/engine/share_snapshot_names.h"
#include "fake_storage/engine/storage_schema.h"
#include "tests/common/dev_account.h"
#include "tests/common/test_dir.h"
#include "tests/fuse_mounts/mount_test_files.h"

namespace bai::mounts {
namespace {

namespace fs = std::filesystem;
using bai::testing::kAcct;

using namespace bai::mounts::testing;

class ShareFsTest : public ::testing::Test {
protected:
    void SetUp() override {
        if (!can_mount_fuse()) {
            GTEST_SKIP() << "SKIPPED: needs /dev/fuse and root to mount";
        }
        db = db::Database::open(dir / "state.db");
        storage::migrate_storage_schema(*db);
        content = std::make_unique<storage::ContentFiles>(dir / "storage", false);
        files = std::make_unique<storage::FileStore>(*db, *content);
        files->create_share(kAcct, "data", std::nullopt, {});
        mnt = dir / "mnt";
        fs::create_directories(mnt);
        ShareFsOptions options;
        options.faults = &faults;
        options.passthrough = passthrough();
        share = std::make_unique<ShareFs>(*files, kAcct, "data", options);
        share->mount(mnt);
    }
    void TearDown() override {
        if (share) share->unmount();
    }
    virtual bool passthrough() const { return true; }
    storage::ShareEntry rest(const std::string& path) { return files->get_file(kAcct, "data", path); }
    std::vector<std::string> rest_names(const std::string& path) {
        std::vector<std::string> out;
        for (const auto& e : files->list_directory(kAcct, "data", path, {}).entries) out.push_back(e.name);
        return out;
    }

    bai::testing::TestDir dir;
    std::unique_ptr<db::Database> db;
    std::unique_ptr<storage::ContentFiles> content;
    std::unique_ptr<storage::FileStore> files;
    MountFaults faults;
    std::unique_ptr<ShareFs> share;
    fs::path mnt;
};

TEST_F(ShareFsTest, AWriteThroughTheMountIsInTheIndexWhenItReturns) {
    int fd = ::open((mnt / "log.txt").c_str(), O_CREAT | O_WRONLY, 0644);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(rest("log.txt").size, 0u);  // created: a 0-byte file
    ASSERT_EQ(::write(fd, "hello\n", 6), 6);
    storage::ShareEntry first = rest("log.txt");  // the file still open, as a growing stdout.txt
    EXPECT_EQ(first.size, 6u);
    // Same size, new content. Passed through, only the mtime tells: a tick later on kernels whose
    // timestamps are coarse (before Linux 6.13).
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_EQ(::pwrite(fd, "HELLO\n", 6, 0), 6);
    storage::ShareEntry second = rest("log.txt");
    EXPECT_NE(second.etag, first.etag);
    ::close(fd);
    EXPECT_EQ(read_all(files->share_root(kAcct, "data") / "log.txt"), "HELLO\n");
}

// A passed-through file's close sends no FLUSH, and its RELEASE comes after close(2) returns:
// REST right after the close still sees the last write (the store catches the file up itself).
TEST_F(ShareFsTest, RestRightAfterACloseSeesTheLastWrite) {
    std::string previous_etag;
    for (int i = 1; i <= 100; ++i) {
        const std::string name = "shard" + std::to_string(i % 4) + ".bin";
        int fd = ::open((mnt / name).c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
        ASSERT_GE(fd, 0);
        const std::string content(static_cast<size_t>(i), 'x');
        ASSERT_EQ(::write(fd, content.data(), content.size()), static_cast<ssize_t>(content.size()));
        ASSERT_EQ(::close(fd), 0);
        storage::ShareEntry entry = rest(name);
        EXPECT_EQ(entry.size, static_cast<std::uint64_t>(i)) << name;
        EXPECT_NE(entry.etag, previous_etag) << name;
        previous_etag = entry.etag;
    }
}

TEST_F(ShareFsTest, WhatRestWritesTheMountReads) {
    files->create_directory(kAcct, "data", "in", {}, {});
    files->create_file(kAcct, "data", "in/a.txt", 4, {}, {}, {});
    EXPECT_EQ(fs::file_size(mnt / "in" / "a.txt"), 4u);
    EXPECT_FALSE(fs::exists(mnt / "in" / "b.txt"));  // a negative entry the kernel keeps a while
    // What the File REST API does (Set File Properties, Put Range, Create File) is seen at once,
    // although the kernel caches entries and attributes: the store tells the mount.
    files->set_file_properties(kAcct, "data", "in/a.txt", 8, std::nullopt, {});
    auto range = content->begin(false);
    range->append("abcdefgh");
    files->put_range(kAcct, "data", "in/a.txt", 0, *range);
    EXPECT_EQ(fs::file_size(mnt / "in" / "a.txt"), 8u);
    EXPECT_EQ(read_all(mnt / "in" / "a.txt"), "abcdefgh");
    files->create_file(kAcct, "data", "in/b.txt", 2, {}, {}, {});
    EXPECT_EQ(fs::file_size(mnt / "in" / "b.txt"), 2u);
    files->delete_file(kAcct, "data", "in/a.txt");
    EXPECT_FALSE(fs::exists(mnt / "in" / "a.txt"));
}

// A file with an active lease is written over REST only with its lease id: the mount, which has
// none, refuses to write, truncate, remove or rename it (EBUSY) and still reads it; once the lease
// is released (or broken) the mount writes it again.
TEST_F(ShareFsTest, ALeasedFileRefusesWritesThroughTheMount) {
    files->create_file(kAcct, "data", "held.txt", 4, {}, {}, {});
    storage::LeaseRequest acquire{storage::LeaseAction::acquire, std::nullopt,
                                  std::string("6bb1a5a4-4c43-4f4b-9a5b-2b5c0c3b1d10"), -1, std::nullopt};
    files->lease_file(kAcct, "data", "held.txt", acquire);
    const std::string etag = rest("held.txt").etag;
    const fs::path held = mnt / "held.txt";
    auto open_error = [&](int flags) {
        int fd = ::open(held.c_str(), flags, 0644);
        if (fd >= 0) ::close(fd);
        return fd >= 0 ? 0 : errno;
    };
    EXPECT_EQ(open_error(O_WRONLY), EBUSY);
    EXPECT_EQ(open_error(O_RDWR), EBUSY);
    EXPECT_EQ(open_error(O_WRONLY | O_CREAT | O_TRUNC), EBUSY);
    EXPECT_EQ(::truncate(held.c_str(), 0) == 0 ? 0 : errno, EBUSY);
    EXPECT_EQ(::unlink(held.c_str()) == 0 ? 0 : errno, EBUSY);
    EXPECT_EQ(::rename(held.c_str(), (mnt / "moved.txt").c_str()) == 0 ? 0 : errno, EBUSY);
    { std::ofstream(mnt / "other.txt") << "x"; }
    EXPECT_EQ(::rename((mnt / "other.txt").c_str(), held.c_str()) == 0 ? 0 : errno, EBUSY);
    EXPECT_EQ(open_error(O_RDONLY), 0);
    EXPECT_EQ(read_all(held), std::string(4, '\0'));
    EXPECT_EQ(rest("held.txt").etag, etag);
    EXPECT_EQ(fs::file_size(files->share_root(kAcct, "data") / "held.txt"), 4u);

    files->lease_file(kAcct, "data", "held.txt", {storage::LeaseAction::break_});
    int fd = ::open(held.c_str(), O_WRONLY | O_TRUNC);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, "ok", 2), 2);
    ::close(fd);
    EXPECT_EQ(rest("held.txt").size, 2u);
}

// A share deleted under its mount (soft delete moves its directory away, and the mount's root
// follows it) is gone from the mount: its names, its root and every write answer ENOENT, and
// nothing lands in the deleted share; Undelete Share brings its files back to the same mount.
TEST_F(ShareFsTest, ASoftDeletedShareGoesFromItsMountAndComesBackWithItsUndelete) {
    fs::create_directories(mnt / "kept");
    write_all(mnt / "kept" / "old.txt", "old");
    ASSERT_EQ(read_all(mnt / "kept" / "old.txt"), "old");
    files->delete_share(kAcct, "data", std::nullopt, false, true);
    std::error_code ec;
    EXPECT_FALSE(fs::exists(mnt / "kept" / "old.txt", ec));
    EXPECT_FALSE(fs::exists(mnt / "kept", ec));
    struct stat st {};
    EXPECT_NE(::stat(mnt.c_str(), &st), 0);  // the share itself, as a deleted container's mount
    EXPECT_EQ(errno, ENOENT);
    EXPECT_LT(::open((mnt / "new.txt").c_str(), O_CREAT | O_WRONLY, 0644), 0);
    EXPECT_EQ(errno, ENOENT);
    EXPECT_NE(::mkdir((mnt / "newdir").c_str(), 0755), 0);
    EXPECT_EQ(errno, ENOENT);
    const auto deleted = files->list_shares(kAcct, {}, true).shares;
    ASSERT_EQ(deleted.size(), 1u);
    files->undelete_share(kAcct, "data", "data", deleted[0].deleted_version, time::now() - std::chrono::hours(24 * 7));
    EXPECT_EQ(read_all(mnt / "kept" / "old.txt"), "old");
    EXPECT_FALSE(fs::exists(mnt / "new.txt"));  // nothing was written while it was gone
    EXPECT_FALSE(fs::exists(mnt / "newdir"));
    write_all(mnt / "kept" / "after.txt", "after");
    EXPECT_EQ(rest("kept/after.txt").size, 5u);
}

// A share deleted for good, then made anew, is not the directory this mount serves: the mount
// shows it gone until it is mounted again.
TEST_F(ShareFsTest, AShareDeletedForGoodStaysGoneFromItsMountWhenMadeAgain) {
    write_all(mnt / "old.txt", "old");
    files->delete_share(kAcct, "data");
    std::error_code ec;
    EXPECT_FALSE(fs::exists(mnt / "old.txt", ec));
    files->create_share(kAcct, "data", std::nullopt, {});
    files->changes().publish(kAcct, "data", "");  // (creating a share tells no mount)
    EXPECT_FALSE(fs::exists(mnt / "old.txt", ec));
    EXPECT_LT(::open((mnt / "new.txt").c_str(), O_CREAT | O_WRONLY, 0644), 0);
    EXPECT_EQ(errno, ENOENT);
    EXPECT_TRUE(rest_names("").empty());  // nothing landed in the new share
}

// Copy File's result is in the share when the copy answers: the mount reads it at once.
TEST_F(ShareFsTest, ACopysResultIsSeenAtOnce) {
    files->create_file(kAcct, "data", "src.txt", 5, {}, {}, {});
    EXPECT_FALSE(fs::exists(mnt / "copy.txt"));  // a negative entry the kernel keeps a while
    storage::OpenFile source = files->open_file(kAcct, "data", "src.txt");
    files->copy_file(kAcct, "data", "copy.txt", storage::copy_from(source), {}, {}, source.info.smb, {}, {"id", "url"}, false, std::nullopt);
    EXPECT_EQ(fs::file_size(mnt / "copy.txt"), 5u);
}

TEST_F(ShareFsTest, ASnapshotStaysAsTakenWhileTheMountWritesInPlace) {
    int fd = ::open((mnt / "model.txt").c_str(), O_CREAT | O_WRONLY, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, "epoch 1\n", 8), 8);
    // Taken while the file is open and written through the kernel (passthrough).
    storage::ShareInfo snap = files->snapshot_share(kAcct, "data", std::nullopt);
    ASSERT_EQ(::pwrite(fd, "EPOCH 2\n", 8, 0), 8);
    ASSERT_EQ(::write(fd, "more\n", 5), 5);
    ::close(fd);
    const std::string key = storage::share_snapshot_key("data", snap.snapshot);
    storage::OpenFile frozen = files->open_file(kAcct, key, "model.txt");
    std::string bytes(frozen.info.size, '\0');
    ASSERT_EQ(::pread(frozen.fd, bytes.data(), bytes.size(), 0), 8);
    EXPECT_EQ(bytes, "epoch 1\n");
    EXPECT_EQ(read_all(mnt / "model.txt"), "EPOCH 2\nmore\n");
    // The mount shows the share alone: its snapshots are not in it.
    std::vector<std::string> listed;
    for (const auto& e : fs::directory_iterator(mnt)) listed.push_back(e.path().filename().string());
    EXPECT_EQ(listed, (std::vector<std::string>{"model.txt"}));
    EXPECT_EQ(rest("model.txt").size, 13u);
}

TEST_F(ShareFsTest, TimesAndModesOfAnOpenDirectory) {
    fs::create_directory(mnt / "d");
    int fd = ::open((mnt / "d").c_str(), O_RDONLY | O_DIRECTORY);
    ASSERT_GE(fd, 0);
    timespec times[2] = {{1000000000, 0}, {1000000000, 0}};
    EXPECT_EQ(::futimens(fd, times), 0) << std::strerror(errno);
    EXPECT_EQ(::fchmod(fd, 0700), 0) << std::strerror(errno);
    struct stat st {};
    ASSERT_EQ(::fstat(fd, &st), 0);
    EXPECT_EQ(st.st_mtim.tv_sec, 1000000000);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    ::close(fd);
}

TEST_F(ShareFsTest, TwoMountsOfOneShareSeeEachOthersChangesAtOnce) {
    // Two nodes mounting one share: each kernel caches entries and attributes, and a change
    // through one mount is invalidated in the other's.
    const fs::path other_mnt = dir / "mnt2";
    fs::create_directories(other_mnt);
    ShareFs other(*files, kAcct, "data", {});
    other.mount(other_mnt);
    EXPECT_FALSE(fs::exists(other_mnt / "shared.txt"));  // cached as absent
    write_all(mnt / "shared.txt", "12345");
    // (the other mount learns asynchronously: give the notifier a moment)
    for (int i = 0; i < 100 && !fs::exists(other_mnt / "shared.txt"); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_EQ(fs::file_size(other_mnt / "shared.txt"), 5u);
    write_all(mnt / "shared.txt", "1234567890");
    for (int i = 0; i < 100 && fs::file_size(other_mnt / "shared.txt") != 10; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_EQ(read_all(other_mnt / "shared.txt"), "1234567890");
    fs::remove(mnt / "shared.txt");
    for (int i = 0; i < 100 && fs::exists(other_mnt / "shared.txt"); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_FALSE(fs::exists(other_mnt / "shared.txt"));
    other.unmount();
}

TEST_F(ShareFsTest, DirectoriesNestDeeplyAndListBothWays) {
    fs::path deep = mnt;
    std::string rel;
    for (int i = 0; i < 20; ++i) {
        deep /= named("d", i);
        rel.append(rel.empty() ? "" : "/").append(named("d", i));
    }
    fs::create_directories(deep);
    write_all(deep / "leaf.txt", "x");
    EXPECT_EQ(rest(rel + "/leaf.txt").size, 1u);
    files->create_file(kAcct, "data", "d0/rest.txt", 0, {}, {}, {});
    std::vector<std::string> seen;
    for (const auto& entry : fs::directory_iterator(mnt / "d0")) seen.push_back(entry.path().filename().string());
    std::sort(seen.begin(), seen.end());
    EXPECT_EQ(seen, (std::vector<std::string>{"d1", "rest.txt"}));
    EXPECT_EQ(rest_names("d0"), (std::vector<std::string>{"d1", "rest.txt"}));
}

TEST_F(ShareFsTest, RenameOverAnExistingFileAndOfADirectory) {
    write_all(mnt / "a.txt", "new");
    write_all(mnt / "b.txt", "old content");
    ASSERT_EQ(std::rename((mnt / "a.txt").c_str(), (mnt / "b.txt").c_str()), 0);
    EXPECT_EQ(read_all(mnt / "b.txt"), "new");
    EXPECT_EQ(rest("b.txt").size, 3u);
    EXPECT_EQ(rest_names(""), (std::vector<std::string>{"b.txt"}));
    fs::create_directories(mnt / "dir" / "sub");
    write_all(mnt / "dir" / "sub" / "f.txt", "ff");
    fs::rename(mnt / "dir", mnt / "moved");
    EXPECT_EQ(rest("moved/sub/f.txt").size, 2u);
    EXPECT_EQ(rest_names(""), (std::vector<std::string>{"b.txt", "moved"}));
}

TEST_F(ShareFsTest, AnUnlinkedOpenFileStaysReadable) {
    write_all(mnt / "tmp.txt", "still here");
    int fd = ::open((mnt / "tmp.txt").c_str(), O_RDONLY);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::unlink((mnt / "tmp.txt").c_str()), 0);
    EXPECT_FALSE(fs::exists(mnt / "tmp.txt"));
    EXPECT_TRUE(rest_names("").empty());
    char buffer[16] = {};
    EXPECT_EQ(::pread(fd, buffer, sizeof buffer, 0), 10);
    EXPECT_STREQ(buffer, "still here");
    ::close(fd);
}

TEST_F(ShareFsTest, SparseWritesTruncateAndEmptyFiles) {
    int fd = ::open((mnt / "sparse.bin").c_str(), O_CREAT | O_RDWR, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, "z", 1, 1 << 20), 1);
    EXPECT_EQ(rest("sparse.bin").size, (1u << 20) + 1);
    char byte = 'x';
    ASSERT_EQ(::pread(fd, &byte, 1, 4096), 1);
    EXPECT_EQ(byte, '\0');
    ASSERT_EQ(::ftruncate(fd, 10), 0);
    ::close(fd);
    EXPECT_EQ(rest("sparse.bin").size, 10u);
    ASSERT_EQ(::truncate((mnt / "sparse.bin").c_str(), 0), 0);
    EXPECT_EQ(rest("sparse.bin").size, 0u);
    std::ofstream(mnt / "empty.txt").close();
    EXPECT_EQ(rest("empty.txt").size, 0u);
    EXPECT_EQ(fs::file_size(mnt / "empty.txt"), 0u);
}

TEST_F(ShareFsTest, RmdirOfANonEmptyDirectoryAndStatfs) {
    fs::create_directories(mnt / "full");
    write_all(mnt / "full" / "f", "1");
    EXPECT_EQ(::rmdir((mnt / "full").c_str()), -1);
    EXPECT_EQ(errno, ENOTEMPTY);
    fs::remove(mnt / "full" / "f");
    EXPECT_EQ(::rmdir((mnt / "full").c_str()), 0);
    EXPECT_TRUE(rest_names("").empty());
    struct statvfs st {};
    EXPECT_EQ(::statvfs(mnt.c_str(), &st), 0);
    EXPECT_GT(st.f_blocks, 0u);
}

TEST_F(ShareFsTest, TimesAndModes) {
    write_all(mnt / "t.txt", "t");
    timespec times[2] = {{1000000000, 0}, {1200000000, 0}};
    ASSERT_EQ(::utimensat(AT_FDCWD, (mnt / "t.txt").c_str(), times, 0), 0);
    struct stat st {};
    ASSERT_EQ(::stat((mnt / "t.txt").c_str(), &st), 0);
    EXPECT_EQ(st.st_mtim.tv_sec, 1200000000);
    ASSERT_EQ(::chmod((mnt / "t.txt").c_str(), 0600), 0);
    ASSERT_EQ(::stat((mnt / "t.txt").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(ShareFsTest, ConcurrentWritersToDifferentFiles) {
    std::vector<std::thread> writers;
    for (int w = 0; w < 4; ++w) {
        writers.emplace_back([&, w] {
            int fd = ::open((mnt / named("w", w, ".txt")).c_str(), O_CREAT | O_WRONLY, 0644);
            std::string line(1000, static_cast<char>('a' + w));
            for (int i = 0; i < 100; ++i) (void)::write(fd, line.data(), line.size());
            ::close(fd);
        });
    }
    for (auto& t : writers) t.join();
    for (int w = 0; w < 4; ++w) {
        const std::string name = named("w", w, ".txt");
        EXPECT_EQ(rest(name).size, 100000u) << name;
        EXPECT_EQ(read_all(mnt / name), std::string(100000, static_cast<char>('a' + w)));
    }
}

// Every file served by the mount, none passed through to the kernel: what faults and unmounts do
// to files that are already open.
class ShareFsServedTest : public ShareFsTest {
protected:
    bool passthrough() const override { return false; }
};

TEST_F(ShareFsServedTest, InjectedFaultsFailTheNextOperationsThenStop) {
    int fd = ::open((mnt / "f.txt").c_str(), O_CREAT | O_RDWR, 0644);
    ASSERT_GE(fd, 0);
    faults.set(VolumeKind::share, kAcct, "data", {ENOSPC, 2, std::chrono::milliseconds(0)});
    EXPECT_EQ(::write(fd, "abc", 3), -1);
    EXPECT_EQ(errno, ENOSPC);
    EXPECT_EQ(::write(fd, "abc", 3), -1);
    EXPECT_EQ(errno, ENOSPC);
    EXPECT_EQ(::write(fd, "abc", 3), 3);  // two operations failed: the plan is spent
    EXPECT_FALSE(faults.get(VolumeKind::share, kAcct, "data"));
    ::close(fd);
    faults.set(VolumeKind::share, kAcct, "data", {EIO, 1, std::chrono::milliseconds(0)});
    EXPECT_EQ(::open((mnt / "f.txt").c_str(), O_RDWR), -1);  // open is counted
    EXPECT_EQ(errno, EIO);
    fd = ::open((mnt / "f.txt").c_str(), O_RDWR);  // the page cache goes at open: reads reach the mount
    ASSERT_GE(fd, 0);
    // A read may reach the mount more than once (readahead, then the page itself): enough
    // operations fail for every attempt, and the plan is cleared afterwards.
    faults.set(VolumeKind::share, kAcct, "data", {EIO, 10, std::chrono::milliseconds(0)});
    char buffer[4];
    EXPECT_EQ(::pread(fd, buffer, sizeof buffer, 0), -1);
    EXPECT_EQ(errno, EIO);
    faults.clear(VolumeKind::share, kAcct, "data");
    EXPECT_EQ(::pread(fd, buffer, 3, 0), 3);
    faults.set(VolumeKind::share, kAcct, "other-share", {EIO, 5, std::chrono::milliseconds(0)});
    EXPECT_EQ(::write(fd, "x", 1), 1);  // another share's plan
    faults.set(VolumeKind::share, kAcct, "data", {0, 1, std::chrono::milliseconds(200)});
    auto started = std::chrono::steady_clock::now();
    EXPECT_EQ(::write(fd, "y", 1), 1);  // stalled, then done
    EXPECT_GE(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(200));
    ::close(fd);
}

TEST_F(ShareFsServedTest, UnmountReturnsWhileAFileIsStillOpen) {
    int fd = ::open((mnt / "held.txt").c_str(), O_CREAT | O_WRONLY, 0644);
    ASSERT_GE(fd, 0);
    share->unmount();  // must not wait for the holder
    EXPECT_EQ(::write(fd, "x", 1), -1);
    EXPECT_EQ(errno, ENOTCONN);
    ::close(fd);
    EXPECT_FALSE(fs::exists(mnt / "held.txt"));
}

// With passthrough (the default): a plan meets the files opened after it is set; files opened
// before it are read and written by the kernel itself, their writes in the index at once all the same.
TEST_F(ShareFsTest, FaultsMeetTheFilesOpenedAfterThePlan) {
    faults.set(VolumeKind::share, kAcct, "data", {ENOSPC, 1, std::chrono::milliseconds(0)});
    EXPECT_EQ(::open((mnt / "f.txt").c_str(), O_CREAT | O_RDWR, 0644), -1);  // an open is counted
    EXPECT_EQ(errno, ENOSPC);
    faults.set(VolumeKind::share, kAcct, "data", {0, 2, std::chrono::milliseconds(0)});
    int fd = ::open((mnt / "f.txt").c_str(), O_CREAT | O_RDWR, 0644);  // served: a plan waited
    ASSERT_GE(fd, 0);
    faults.set(VolumeKind::share, kAcct, "data", {ENOSPC, 1, std::chrono::milliseconds(0)});
    EXPECT_EQ(::write(fd, "abc", 3), -1);
    EXPECT_EQ(errno, ENOSPC);
    EXPECT_EQ(::write(fd, "abc", 3), 3);
    ::close(fd);
    if (!share->passes_through()) {
        std::printf("SKIPPED (part): this kernel offers no FUSE passthrough (Linux 6.9+)\n");
        return;
    }
    fd = ::open((mnt / "f.txt").c_str(), O_RDWR);
    ASSERT_GE(fd, 0) << std::strerror(errno);
    faults.set(VolumeKind::share, kAcct, "data", {EIO, 5, std::chrono::milliseconds(0)});
    EXPECT_EQ(::pwrite(fd, "defg", 4, 3), 4);  // the kernel's own write: never reaches the plan
    EXPECT_EQ(rest("f.txt").size, 7u);
    EXPECT_EQ(files->list_directory(kAcct, "data", "", {}).entries.at(0).size, 7u);
    const std::string etag = rest("f.txt").etag;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a tick of a coarse clock
    ASSERT_EQ(::pwrite(fd, "ABC", 3, 0), 3);
    EXPECT_NE(rest("f.txt").etag, etag);  // same size, new content
    ::close(fd);
    EXPECT_EQ(faults.get(VolumeKind::share, kAcct, "data")->operations, 5);
    faults.clear(VolumeKind::share, kAcct, "data");
    EXPECT_EQ(read_all(mnt / "f.txt"), "ABCdefg");
}

TEST_F(ShareFsTest, APassedThroughFileOutlivesTheUnmount) {
    if (!share->passes_through()) GTEST_SKIP() << "SKIPPED: this kernel offers no FUSE passthrough (Linux 6.9+)";
    int fd = ::open((mnt / "held.txt").c_str(), O_CREAT | O_WRONLY, 0644);
    ASSERT_GE(fd, 0);
    share->unmount();  // must not wait for the holder
    EXPECT_EQ(::write(fd, "x", 1), 1);  // into the share's directory, as a job's local file would
    ::close(fd);
    EXPECT_FALSE(fs::exists(mnt / "held.txt"));
    EXPECT_EQ(read_all(files->share_root(kAcct, "data") / "held.txt"), "x");
}

TEST(ShareFsMount, AMissingShareIsRefusedAndReadOnlyRefusesWrites) {
    if (!can_mount_fuse()) GTEST_SKIP() << "SKIPPED: needs /dev/fuse and root";
    bai::testing::TestDir dir;
    auto db = db::Database::open(dir / "state.db");
    storage::migrate_storage_schema(*db);
    storage::ContentFiles content(dir / "storage", false);
    storage::FileStore files(*db, content);
    fs::create_directories(dir / "mnt");
    ShareFs missing(files, kAcct, "nope");
    EXPECT_ANY_THROW(missing.mount(dir / "mnt"));
    files.create_share(kAcct, "ro", std::nullopt, {});
    files.create_file(kAcct, "ro", "r.txt", 2, {}, {}, {});
    ShareFs read_only(files, kAcct, "ro", {true, 0777, 0777});
    read_only.mount(dir / "mnt");
    EXPECT_EQ(fs::file_size(dir / "mnt" / "r.txt"), 2u);
    EXPECT_EQ(::open((dir / "mnt" / "new.txt").c_str(), O_CREAT | O_WRONLY, 0644), -1);
    EXPECT_EQ(errno, EROFS);
    read_only.unmount();
    EXPECT_FALSE(fs::exists(dir / "mnt" / "r.txt"));  // unmounted: the empty mount point again
}

}  // namespace
}  // namespace bai::mounts
