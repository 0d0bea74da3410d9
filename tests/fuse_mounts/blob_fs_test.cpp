// The blob-container filesystem through the kernel: virtual directories and hdi_isfolder markers,
// snapshot reads, writes committed as one blob at close, rename as copy and delete, and coherence
// with the BlobStore that the Blob REST API serves. Needs /dev/fuse and the right to mount.
#include "fuse_mounts/blob/blob_fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <thread>

#include <nlohmann/json.hpp>

#include "common/crypto/base64.h"
#include "fake_storage/engine/storage_error.h"
#include "fake_storage/engine/storage_schema.h"
#include "tests/common/dev_account.h"
#include "tests/common/test_dir.h"
#include "tests/fuse_mounts/mount_test_files.h"

namespace bai::mounts {
namespace {

namespace fs = std::filesystem;
using namespace bai::mounts::testing;
using bai::testing::kAcct;

std::vector<std::string> listed(const fs::path& dir) {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

class BlobFsTest : public ::testing::Test {
protected:
    void SetUp() override {
        if (!can_mount_fuse()) GTEST_SKIP() << "SKIPPED: needs /dev/fuse and root to mount";
        db = db::Database::open(dir / "state.db");
        storage::migrate_storage_schema(*db);
        content = std::make_unique<storage::ContentFiles>(dir / "storage", false);
        blobs = std::make_unique<storage::BlobStore>(*db, *content);
        blobs->create_container(kAcct, "data", {}, "");
        mnt = dir / "mnt";
        fs::create_directories(mnt);
        mount_container({});
    }
    void TearDown() override {
        if (container) container->unmount();
    }
    void mount_container(BlobFsOptions options) {
        if (container) container->unmount();
        options.faults = &faults;
        options.staging_dir = dir / "staging";
        container = std::make_unique<BlobFs>(*blobs, *content, kAcct, "data", options);
        container->mount(mnt);
    }
    void put(const std::string& name, const std::string& bytes, const storage::Metadata& metadata = {}) {
        auto writer = content->begin(false);
        writer->append(bytes);
        blobs->put_blob(kAcct, "data", name, *writer, {}, metadata, {});
    }
    std::string body(const std::string& name) {
        storage::OpenBlob blob = blobs->open_blob(kAcct, "data", name);
        std::string out(blob.info.size, '\0');
        EXPECT_EQ(blob.read(out.data(), out.size(), 0), static_cast<ssize_t>(out.size()));
        return out;
    }
    bool exists(const std::string& name) {
        try {
            blobs->get_blob(kAcct, "data", name);
            return true;
        } catch (const storage::StorageError&) {
            return false;
        }
    }

    bai::testing::TestDir dir;
    std::unique_ptr<db::Database> db;
    std::unique_ptr<storage::ContentFiles> content;
    std::unique_ptr<storage::BlobStore> blobs;
    MountFaults faults;
    std::unique_ptr<BlobFs> container;
    fs::path mnt;
};

TEST_F(BlobFsTest, ADirectoryOfThousandsOfBlobsListsWhole) {
    // More entries than one readdir buffer holds: the listing continues at the kernel's offset.
    for (int i = 0; i < 2000; ++i) put("many/f" + std::to_string(i) + ".txt", "");
    EXPECT_EQ(listed(mnt / "many").size(), 2000u);
    fs::remove_all(mnt / "many");
    EXPECT_FALSE(fs::exists(mnt / "many"));
    EXPECT_TRUE(blobs->list_blobs(kAcct, "data", {}).entries.empty());
}

TEST_F(BlobFsTest, BlobNamesWithSlashesAreVirtualDirectories) {
    put("a/b/c.txt", "deep");
    put("a/top.txt", "top");
    put("root.txt", "r");
    EXPECT_EQ(listed(mnt), (std::vector<std::string>{"a", "root.txt"}));
    EXPECT_EQ(listed(mnt / "a"), (std::vector<std::string>{"b", "top.txt"}));
    EXPECT_TRUE(fs::is_directory(mnt / "a" / "b"));
    EXPECT_EQ(read_all(mnt / "a" / "b" / "c.txt"), "deep");
    EXPECT_EQ(fs::file_size(mnt / "a" / "top.txt"), 3u);
    EXPECT_FALSE(fs::exists(mnt / "a" / "missing"));
    // Once its last blob goes, a virtual directory is gone.
    blobs->delete_blob(kAcct, "data", "a/b/c.txt", {});
    EXPECT_FALSE(fs::exists(mnt / "a" / "b"));
}

TEST_F(BlobFsTest, MkdirWritesAFolderMarkerAndRmdirRemovesIt) {
    fs::create_directory(mnt / "empty");
    ASSERT_TRUE(exists("empty"));
    storage::BlobInfo marker = blobs->get_blob(kAcct, "data", "empty");
    EXPECT_EQ(marker.size, 0u);
    EXPECT_EQ(marker.metadata.at("hdi_isfolder"), "true");
    EXPECT_TRUE(fs::is_directory(mnt / "empty"));
    EXPECT_TRUE(listed(mnt / "empty").empty());
    EXPECT_EQ(::mkdir((mnt / "empty").c_str(), 0755), -1);
    EXPECT_EQ(errno, EEXIST);
    write_all(mnt / "empty" / "f.txt", "x");
    EXPECT_EQ(::rmdir((mnt / "empty").c_str()), -1);
    EXPECT_EQ(errno, ENOTEMPTY);
    fs::remove(mnt / "empty" / "f.txt");
    EXPECT_EQ(::rmdir((mnt / "empty").c_str()), 0);
    EXPECT_FALSE(exists("empty"));
    EXPECT_FALSE(fs::exists(mnt / "empty"));
    // A marker written through REST (as blobfuse and the portal do) is an empty directory.
    put("made-by-rest", "", {{"hdi_isfolder", "true"}});
    EXPECT_TRUE(fs::is_directory(mnt / "made-by-rest"));
    EXPECT_EQ(::rmdir((mnt / "f.txt").c_str()), -1);
    EXPECT_EQ(errno, ENOENT);
}

TEST_F(BlobFsTest, TimesOfAnOpenDirectorySucceedAndChangeNothing) {
    fs::create_directory(mnt / "d");
    int fd = ::open((mnt / "d").c_str(), O_RDONLY | O_DIRECTORY);
    ASSERT_GE(fd, 0);
    timespec times[2] = {{1000000000, 0}, {1000000000, 0}};
    EXPECT_EQ(::futimens(fd, times), 0);
    EXPECT_EQ(::fchmod(fd, 0700), 0);
    struct stat st {};
    ASSERT_EQ(::fstat(fd, &st), 0);
    EXPECT_TRUE(S_ISDIR(st.st_mode));
    EXPECT_EQ(st.st_mode & 0777, 0777u);
    ::close(fd);
}

// With the account's versioning on, what a mount commits makes versions as REST writes do: each
// close keeps the blob it replaces, and a file removed leaves its versions; the mount shows only
// the blobs themselves.
TEST_F(BlobFsTest, CommitsOfAVersionedAccountKeepVersions) {
    blobs->service_settings().update(kAcct, "blob", nlohmann::json::object(), [](nlohmann::json p) {
        p["IsVersioningEnabled"] = true;
        return p;
    });
    for (const std::string text : {"one", "two"}) {
        int fd = ::open((mnt / "notes.txt").c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
        ASSERT_GE(fd, 0);
        ASSERT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
        ASSERT_EQ(::close(fd), 0);
    }
    storage::ListOptions versions;
    versions.versions = true;
    std::vector<std::string> kept;
    for (const storage::BlobListEntry& e : blobs->list_blobs(kAcct, "data", versions).entries) {
        storage::OpenBlob b = blobs->open_blob(kAcct, "data", e.blob.name, e.blob.is_current_version() ? "" : e.blob.snapshot);
        std::string out(b.info.size, '\0');
        ASSERT_EQ(b.read(out.data(), out.size(), 0), static_cast<ssize_t>(out.size()));
        kept.push_back(out);
    }
    // The create (0 bytes), then each close; the last is the blob. (The second open's O_TRUNC
    // may commit the emptied blob before its write does, as one more, empty, version.)
    ASSERT_GE(kept.size(), 3u);
    EXPECT_EQ(kept.front(), "");
    EXPECT_EQ(kept.back(), "two");
    std::vector<std::string> written;
    for (const std::string& k : kept) {
        if (!k.empty()) written.push_back(k);
    }
    EXPECT_EQ(written, (std::vector<std::string>{"one", "two"}));
    EXPECT_EQ(listed(mnt), std::vector<std::string>{"notes.txt"});
    ASSERT_EQ(::unlink((mnt / "notes.txt").c_str()), 0);
    EXPECT_FALSE(exists("notes.txt"));
    EXPECT_TRUE(listed(mnt).empty());
    EXPECT_EQ(blobs->list_blobs(kAcct, "data", versions).entries.size(), kept.size());
}

TEST_F(BlobFsTest, WritesAreCommittedAsOneBlobAtClose) {
    put("model.bin", "old contents");
    int fd = ::open((mnt / "model.bin").c_str(), O_WRONLY | O_TRUNC);
    ASSERT_GE(fd, 0);
    const std::string chunk(1 << 20, 'm');
    for (int i = 0; i < 3; ++i) ASSERT_EQ(::write(fd, chunk.data(), chunk.size()), static_cast<ssize_t>(chunk.size()));
    // Until the close, REST readers see the old blob whole, and the mount shows the staged size.
    EXPECT_EQ(body("model.bin"), "old contents");
    EXPECT_EQ(fs::file_size(mnt / "model.bin"), 3u << 20);
    ASSERT_EQ(::close(fd), 0);
    storage::BlobInfo blob = blobs->get_blob(kAcct, "data", "model.bin");
    EXPECT_EQ(blob.size, 3u << 20);
    EXPECT_EQ(body("model.bin"), chunk + chunk + chunk);
    // A new file is a blob as soon as it is created, and 0 bytes until written.
    fd = ::open((mnt / "new.txt").c_str(), O_CREAT | O_WRONLY, 0644);
    ASSERT_GE(fd, 0);
    EXPECT_TRUE(exists("new.txt"));
    EXPECT_EQ(blobs->get_blob(kAcct, "data", "new.txt").size, 0u);
    ASSERT_EQ(::write(fd, "hello", 5), 5);
    ASSERT_EQ(::fsync(fd), 0);  // fsync commits too
    EXPECT_EQ(body("new.txt"), "hello");
    ::close(fd);
    fd = ::open((mnt / "zero.txt").c_str(), O_CREAT | O_WRONLY, 0644);
    ::close(fd);
    EXPECT_EQ(blobs->get_blob(kAcct, "data", "zero.txt").size, 0u);
    EXPECT_EQ(fs::file_size(mnt / "zero.txt"), 0u);
}

TEST_F(BlobFsTest, ARewriteKeepsTheBlobsMetadataAndContentType) {
    auto writer = content->begin(false);
    writer->append("v1");
    storage::ContentSettings settings;
    settings.content_type = "text/csv";
    blobs->put_blob(kAcct, "data", "table.csv", *writer, settings, {{"origin", "upload"}}, {});
    write_all(mnt / "table.csv", "v2,v2");
    storage::BlobInfo blob = blobs->get_blob(kAcct, "data", "table.csv");
    EXPECT_EQ(body("table.csv"), "v2,v2");
    EXPECT_EQ(blob.content.content_type, "text/csv");
    EXPECT_EQ(blob.metadata.at("origin"), "upload");
}

TEST_F(BlobFsTest, AnOpenFileReadsTheBlobItOpenedWhileRestReplacesIt) {
    const std::string first(200000, 'a');  // beyond the inline limit: a content file
    put("data.bin", first);
    int fd = ::open((mnt / "data.bin").c_str(), O_RDONLY);
    ASSERT_GE(fd, 0);
    put("data.bin", std::string(100, 'b'));
    std::string got(first.size(), '\0');
    EXPECT_EQ(::pread(fd, got.data(), got.size(), 0), static_cast<ssize_t>(first.size()));
    EXPECT_EQ(got, first);
    ::close(fd);
    EXPECT_EQ(read_all(mnt / "data.bin"), std::string(100, 'b'));  // the next open sees the new blob
    EXPECT_EQ(fs::file_size(mnt / "data.bin"), 100u);
}

TEST_F(BlobFsTest, ABlobComposedOfBlocksReadsAndAppendsWhole) {
    std::string expected;
    std::vector<storage::BlockRef> blocks;
    for (char c : {'x', 'y', 'z'}) {
        std::string bytes(100000, c);
        bytes[0] = '<';  // the edges of each part show in the comparison
        bytes.back() = '>';
        auto writer = content->begin(false);
        writer->append(bytes);
        std::string id = crypto::base64_encode(std::string("block-") + c);
        blobs->put_block(kAcct, "data", "blocks.bin", id, *writer);
        blocks.push_back({id, storage::BlockListType::latest});
        expected += bytes;
    }
    blobs->put_block_list(kAcct, "data", "blocks.bin", blocks, {}, {}, {});
    ASSERT_TRUE(blobs->get_blob(kAcct, "data", "blocks.bin").composed);
    EXPECT_EQ(read_all(mnt / "blocks.bin"), expected);
    int fd = ::open((mnt / "blocks.bin").c_str(), O_RDONLY);
    ASSERT_GE(fd, 0);
    char edge[4];
    ASSERT_EQ(::pread(fd, edge, sizeof edge, 99998), 4);  // across the first part's end
    EXPECT_EQ(std::string(edge, 4), "x><y");
    ::close(fd);
    fd = ::open((mnt / "blocks.bin").c_str(), O_WRONLY | O_APPEND);  // stages the parts' bytes
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, "!", 1), 1);
    ::close(fd);
    EXPECT_EQ(body("blocks.bin"), expected + "!");
}

// Append blobs (parts and an inline tail) and page blobs (runs and zeros) read as files; a write
// through the mount stages their bytes and commits a block blob.
TEST_F(BlobFsTest, AppendAndPageBlobsReadWholeAndAWriteMakesABlockBlob) {
    auto empty = content->begin(false);
    storage::BlobTraits append;
    append.type = storage::BlobType::append;
    blobs->put_blob(kAcct, "data", "log", *empty, {}, {}, {}, append);
    std::string expected;
    for (size_t size : {70000u, 300u, 90000u, 12u}) {
        auto writer = content->begin(false);
        std::string bytes(size, static_cast<char>('a' + expected.size() % 26));
        writer->append(bytes);
        blobs->append_block(kAcct, "data", "log", *writer, {}, {});
        expected += bytes;
    }
    EXPECT_EQ(read_all(mnt / "log"), expected);

    auto none = content->begin(false);
    storage::BlobTraits page;
    page.type = storage::BlobType::page;
    page.page_blob_size = 8192;
    blobs->put_blob(kAcct, "data", "disk", *none, {}, {}, {}, page);
    auto pages = content->begin(false);
    pages->append(std::string(1024, 'p'));
    blobs->put_pages(kAcct, "data", "disk", 2048, *pages, {}, {});
    std::string disk(8192, '\0');
    disk.replace(2048, 1024, std::string(1024, 'p'));
    EXPECT_EQ(read_all(mnt / "disk"), disk);

    int fd = ::open((mnt / "disk").c_str(), O_WRONLY | O_APPEND);  // stages the page blob's bytes
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, "!", 1), 1);
    ::close(fd);
    EXPECT_EQ(body("disk"), disk + "!");
    EXPECT_EQ(blobs->get_blob(kAcct, "data", "disk").type, storage::BlobType::block);
}

TEST_F(BlobFsTest, SparseWritesTruncateAndAppend) {
    int fd = ::open((mnt / "sparse.bin").c_str(), O_CREAT | O_RDWR, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, "end", 3, 1 << 20), 3);
    char back[3];
    ASSERT_EQ(::pread(fd, back, 3, 1 << 20), 3);  // read back before close, through the same file
    EXPECT_EQ(std::string(back, 3), "end");
    ::close(fd);
    std::string expected(1 << 20, '\0');
    expected += "end";
    EXPECT_EQ(body("sparse.bin"), expected);
    fs::resize_file(mnt / "sparse.bin", 10);  // truncate(2) of a closed file commits at once
    EXPECT_EQ(blobs->get_blob(kAcct, "data", "sparse.bin").size, 10u);
    EXPECT_EQ(read_all(mnt / "sparse.bin"), std::string(10, '\0'));
    fd = ::open((mnt / "sparse.bin").c_str(), O_WRONLY | O_APPEND);
    ASSERT_EQ(::write(fd, "++", 2), 2);
    ::close(fd);
    EXPECT_EQ(body("sparse.bin"), std::string(10, '\0') + "++");
}

TEST_F(BlobFsTest, RenameCopiesThenDeletesFilesAndWholeDirectories) {
    write_all(mnt / "a.txt", "A");
    write_all(mnt / "b.txt", "B");
    fs::rename(mnt / "a.txt", mnt / "b.txt");  // over an existing file
    EXPECT_FALSE(exists("a.txt"));
    EXPECT_EQ(body("b.txt"), "A");
    EXPECT_EQ(read_all(mnt / "b.txt"), "A");
    fs::create_directories(mnt / "run" / "logs");
    write_all(mnt / "run" / "logs" / "1.log", "one");
    write_all(mnt / "run" / "model.bin", "weights");
    fs::rename(mnt / "run", mnt / "done");
    EXPECT_FALSE(fs::exists(mnt / "run"));
    EXPECT_EQ(read_all(mnt / "done" / "logs" / "1.log"), "one");
    EXPECT_EQ(body("done/model.bin"), "weights");
    EXPECT_TRUE(exists("done/logs"));  // the marker moved too
    EXPECT_FALSE(exists("run/model.bin"));
    EXPECT_FALSE(exists("run/logs"));
    fs::create_directory(mnt / "full");
    write_all(mnt / "full" / "x", "x");
    EXPECT_EQ(::rename((mnt / "done").c_str(), (mnt / "full").c_str()), -1);
    EXPECT_EQ(errno, ENOTEMPTY);
    EXPECT_EQ(::rename((mnt / "done").c_str(), (mnt / "done" / "logs" / "inside").c_str()), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(::rename((mnt / "b.txt").c_str(), (mnt / "full").c_str()), -1);
    EXPECT_EQ(errno, EISDIR);
    // A file still being written is committed before it moves, and its writes follow it.
    int fd = ::open((mnt / "moving.txt").c_str(), O_CREAT | O_WRONLY, 0644);
    ASSERT_EQ(::write(fd, "first", 5), 5);
    fs::rename(mnt / "moving.txt", mnt / "moved.txt");
    ASSERT_EQ(::write(fd, "+more", 5), 5);
    ::close(fd);
    EXPECT_FALSE(exists("moving.txt"));
    EXPECT_EQ(body("moved.txt"), "first+more");
}

TEST_F(BlobFsTest, UnlinkOfAnOpenFileKeepsItsReadersAndDropsItsWrites) {
    put("r.txt", "still here");
    int reader = ::open((mnt / "r.txt").c_str(), O_RDONLY);
    ASSERT_GE(reader, 0);
    fs::remove(mnt / "r.txt");
    EXPECT_FALSE(exists("r.txt"));
    char buffer[16] = {};
    EXPECT_EQ(::pread(reader, buffer, sizeof buffer, 0), 10);
    EXPECT_EQ(std::string(buffer), "still here");
    ::close(reader);
    int writer = ::open((mnt / "w.txt").c_str(), O_CREAT | O_WRONLY, 0644);
    fs::remove(mnt / "w.txt");
    EXPECT_EQ(::write(writer, "lost", 4), 4);
    ::close(writer);
    EXPECT_FALSE(exists("w.txt"));  // not brought back by the close
    EXPECT_EQ(::unlink((mnt / "nothing").c_str()), -1);
    EXPECT_EQ(errno, ENOENT);
}

TEST_F(BlobFsTest, ConcurrentWritersOfDifferentFiles) {
    std::vector<std::thread> writers;
    for (int w = 0; w < 4; ++w) {
        writers.emplace_back([this, w] {
            const fs::path path = mnt / "out" / named("w", w, ".txt");
            if (w == 0) fs::create_directories(mnt / "out");
            while (!fs::exists(mnt / "out")) std::this_thread::sleep_for(std::chrono::milliseconds(1));
            write_all(path, std::string(300000, static_cast<char>('a' + w)));
        });
    }
    for (auto& t : writers) t.join();
    for (int w = 0; w < 4; ++w) {
        EXPECT_EQ(body("out/" + named("w", w, ".txt")), std::string(300000, static_cast<char>('a' + w)));
    }
    EXPECT_EQ(listed(mnt / "out").size(), 4u);
}

TEST_F(BlobFsTest, InjectedFaultsFailOperationsOfThisContainerOnly) {
    write_all(mnt / "f.txt", "abc");
    faults.set(VolumeKind::share, kAcct, "data", {EIO, 5, std::chrono::milliseconds(0)});  // a share of that name
    EXPECT_EQ(read_all(mnt / "f.txt"), "abc");
    int fd = ::open((mnt / "f.txt").c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    faults.set(VolumeKind::container, kAcct, "data", {ENOSPC, 1, std::chrono::milliseconds(0)});
    EXPECT_EQ(::write(fd, "x", 1), -1);
    EXPECT_EQ(errno, ENOSPC);
    ::close(fd);
    faults.set(VolumeKind::container, kAcct, "data", {EIO, 1, std::chrono::milliseconds(0)});
    EXPECT_EQ(::mkdir((mnt / "d").c_str(), 0755), -1);
    EXPECT_EQ(errno, EIO);
    EXPECT_EQ(::mkdir((mnt / "d").c_str(), 0755), 0);
}

TEST_F(BlobFsTest, ReadOnlyMountsRefuseChangesAndTimeoutsCanBeAsked) {
    put("kept.txt", "kept");
    BlobFsOptions options;
    options.read_only = true;
    options.attr_timeout = 60;
    mount_container(options);
    EXPECT_EQ(read_all(mnt / "kept.txt"), "kept");
    EXPECT_EQ(::open((mnt / "kept.txt").c_str(), O_WRONLY), -1);
    EXPECT_EQ(errno, EROFS);
    EXPECT_EQ(::mkdir((mnt / "d").c_str(), 0755), -1);
    EXPECT_EQ(errno, EROFS);
    struct stat st {};
    ASSERT_EQ(::stat((mnt / "kept.txt").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0555u);
}

TEST_F(BlobFsTest, UnmountCommitsAFileStillOpenForWriting) {
    int fd = ::open((mnt / "held.txt").c_str(), O_CREAT | O_WRONLY, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, "kept", 4), 4);
    container->unmount();  // must not wait for the holder
    EXPECT_EQ(::write(fd, "x", 1), -1);
    EXPECT_EQ(errno, ENOTCONN);
    ::close(fd);
    EXPECT_EQ(body("held.txt"), "kept");
}

TEST_F(BlobFsTest, AFileGrowingPastTheMemoryStagingMovesToTheDiskWhole) {
    // Small writes: staged in memory up to 1 MiB, then in an unnamed file; a reader of the open
    // file sees every byte written before and after the move (and its close commits them).
    std::string expected;
    int fd = ::open((mnt / "grown.bin").c_str(), O_CREAT | O_WRONLY, 0644);
    ASSERT_GE(fd, 0);
    for (int i = 0; i < 30; ++i) {
        std::string chunk(100 * 1024, static_cast<char>('a' + i % 26));
        ASSERT_EQ(::write(fd, chunk.data(), chunk.size()), static_cast<ssize_t>(chunk.size()));
        expected += chunk;
        if (i == 5 || i == 15) {
            EXPECT_TRUE(read_all(mnt / "grown.bin") == expected) << "after " << i + 1 << " writes";
        }
    }
    ASSERT_EQ(::close(fd), 0);
    EXPECT_TRUE(body("grown.bin") == expected);

    // A blob larger than the memory staging, appended to: staged on the disk from the start.
    const std::string big(2 * 1024 * 1024 + 7, 'b');
    put("big.bin", big);
    fd = ::open((mnt / "big.bin").c_str(), O_WRONLY | O_APPEND);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, "tail", 4), 4);
    ASSERT_EQ(::close(fd), 0);
    EXPECT_TRUE(body("big.bin") == big + "tail");
}

// ---- the kernel's caches (on by default) and the store's change notifications ----

bool present(const fs::path& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
}

std::int64_t size_of(const fs::path& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 ? st.st_size : -1;
}

TEST_F(BlobFsTest, TheKernelKeepsWhatItWasToldUntilAChangeIsPublished) {
    // A row removed behind the store's back is not published: the kernel's cached entry and
    // attributes answer stat, which is what makes a listing's stats cost no round trip.
    put("cached.txt", "abc");
    ASSERT_EQ(size_of(mnt / "cached.txt"), 3);
    db->exec("DELETE FROM blobs WHERE name = 'cached.txt'");
    EXPECT_EQ(size_of(mnt / "cached.txt"), 3);
    // With the timeouts 0 (blobfuse's -o attr_timeout=0,entry_timeout=0), each stat asks again.
    put("uncached.txt", "abc");
    BlobFsOptions options;
    options.attr_timeout = options.entry_timeout = options.negative_timeout = 0;
    mount_container(options);
    ASSERT_EQ(size_of(mnt / "uncached.txt"), 3);
    db->exec("DELETE FROM blobs WHERE name = 'uncached.txt'");
    EXPECT_FALSE(present(mnt / "uncached.txt"));
}

TEST_F(BlobFsTest, WhatRestChangesIsSeenByTheNextAccessThroughTheMount) {
    // Negative entries: a name looked up before it existed, and a directory that a deep blob makes.
    EXPECT_FALSE(present(mnt / "later.txt"));
    EXPECT_FALSE(present(mnt / "x"));
    ASSERT_EQ(::mkdir((mnt / "known").c_str(), 0755), 0);
    EXPECT_FALSE(present(mnt / "known" / "y"));
    put("later.txt", "now");
    put("x/y/z.txt", "deep");
    put("known/y/z.txt", "deeper");
    EXPECT_EQ(read_all(mnt / "later.txt"), "now");
    EXPECT_EQ(read_all(mnt / "x" / "y" / "z.txt"), "deep");
    EXPECT_EQ(read_all(mnt / "known" / "y" / "z.txt"), "deeper");

    // A replaced blob: its new size and bytes; a deleted one, and the virtual directory it made.
    ASSERT_EQ(size_of(mnt / "later.txt"), 3);
    put("later.txt", "much longer");
    EXPECT_EQ(size_of(mnt / "later.txt"), 11);
    EXPECT_EQ(read_all(mnt / "later.txt"), "much longer");
    blobs->delete_blob(kAcct, "data", "x/y/z.txt", {});
    EXPECT_FALSE(present(mnt / "x" / "y" / "z.txt"));
    EXPECT_FALSE(present(mnt / "x" / "y"));
    EXPECT_FALSE(present(mnt / "x"));
    EXPECT_TRUE(present(mnt / "known"));  // a marker keeps its directory

    // A zero-byte blob that metadata makes a directory marker, and back.
    put("flip", "");
    struct stat st {};
    ASSERT_EQ(::stat((mnt / "flip").c_str(), &st), 0);
    EXPECT_TRUE(S_ISREG(st.st_mode));
    blobs->set_blob_metadata(kAcct, "data", "flip", {{"hdi_isfolder", "true"}}, {});
    ASSERT_EQ(::stat((mnt / "flip").c_str(), &st), 0);
    EXPECT_TRUE(S_ISDIR(st.st_mode));

    // Copies and block lists land as any Put Blob does.
    storage::BlobStore::CopyRequest copy;
    blobs->copy_blob(kAcct, "data", "copied.txt", kAcct, "data", "later.txt", copy, {});
    EXPECT_EQ(read_all(mnt / "copied.txt"), "much longer");
}

TEST_F(BlobFsTest, DeletingTheLastFileOfAVirtualDirectoryThroughTheMountTakesTheDirectory) {
    // The kernel drops the attributes of the file's directory (v/w) itself, not those of v.
    put("v/w/only.txt", "x");
    ASSERT_TRUE(present(mnt / "v" / "w" / "only.txt"));
    ASSERT_EQ(::unlink((mnt / "v" / "w" / "only.txt").c_str()), 0);
    // The invalidation is queued (this mount's own request made the change): it lands at once
    // in practice, and within the test's patience in any case.
    bool gone = false;
    for (int i = 0; i < 500 && !gone; ++i) {
        gone = !present(mnt / "v");
        if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_TRUE(gone);
    EXPECT_EQ(listed(mnt), std::vector<std::string>{});
}

TEST_F(BlobFsTest, TwoMountsOfAContainerSeeEachOthersChanges) {
    const fs::path other_mnt = dir / "other";
    fs::create_directories(other_mnt);
    BlobFsOptions options;
    options.staging_dir = dir / "staging2";
    BlobFs other(*blobs, *content, kAcct, "data", options);
    other.mount(other_mnt);
    EXPECT_FALSE(present(other_mnt / "shared.txt"));  // a negative entry in the other mount
    write_all(mnt / "shared.txt", "one");
    auto eventually = [](const std::function<bool()>& condition) {
        for (int i = 0; i < 500; ++i) {
            if (condition()) return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return false;
    };
    EXPECT_TRUE(eventually([&] { return size_of(other_mnt / "shared.txt") == 3; }));
    write_all(mnt / "shared.txt", "three");
    EXPECT_TRUE(eventually([&] { return size_of(other_mnt / "shared.txt") == 5; }));
    EXPECT_EQ(read_all(other_mnt / "shared.txt"), "three");
    ASSERT_EQ(::unlink((other_mnt / "shared.txt").c_str()), 0);
    EXPECT_TRUE(eventually([&] { return !present(mnt / "shared.txt"); }));
    other.unmount();
}

TEST_F(BlobFsTest, ADeletedAndRecreatedContainerShowsItsNewBlobs) {
    put("old.txt", "old");
    ASSERT_TRUE(present(mnt / "old.txt"));
    blobs->delete_container(kAcct, "data", {});
    EXPECT_FALSE(present(mnt / "old.txt"));
    blobs->create_container(kAcct, "data", {}, "");
    put("new.txt", "new");
    EXPECT_EQ(read_all(mnt / "new.txt"), "new");
    EXPECT_FALSE(present(mnt / "old.txt"));
}

// With container soft delete on, a deleted container is gone from its mount as a deleted one is
// (nothing reads a container kept as deleted), and its restore brings its files back.
TEST_F(BlobFsTest, ASoftDeletedContainerGoesAndComesBackWithItsRestore) {
    blobs->service_settings().update(kAcct, "blob", nlohmann::json::object(), [](nlohmann::json p) {
        p["ContainerDeleteRetentionPolicy"] = {{"Enabled", true}, {"Days", 7}};
        return p;
    });
    put("kept/old.txt", "old");
    ASSERT_EQ(read_all(mnt / "kept" / "old.txt"), "old");
    blobs->delete_container(kAcct, "data", {});
    EXPECT_FALSE(present(mnt / "kept" / "old.txt"));
    EXPECT_FALSE(present(mnt / "kept"));
    storage::ListOptions deleted;
    deleted.deleted = true;
    const std::string version = blobs->list_containers(kAcct, deleted).containers.at(0).deleted_version;
    blobs->restore_container(kAcct, "data", "data", version, time::now() - std::chrono::hours(24 * 7));
    EXPECT_EQ(read_all(mnt / "kept" / "old.txt"), "old");
}

TEST(BlobFsMount, AMissingContainerIsRefused) {
    if (!can_mount_fuse()) GTEST_SKIP() << "SKIPPED: needs /dev/fuse and root";
    bai::testing::TestDir dir;
    auto db = db::Database::open(dir / "state.db");
    storage::migrate_storage_schema(*db);
    storage::ContentFiles content(dir / "storage", false);
    storage::BlobStore blobs(*db, content);
    fs::create_directories(dir / "mnt");
    BlobFsOptions options;
    options.staging_dir = dir / "staging";
    BlobFs missing(blobs, content, kAcct, "nope", options);
    try {
        missing.mount(dir / "mnt");
        FAIL() << "mounted a container that does not exist";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("nope"), std::string::npos);
    }
}

}  // namespace
}  // namespace bai::mounts
