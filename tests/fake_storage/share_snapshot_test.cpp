// Share snapshots in the FileStore: a frozen copy of the share read through its key, its names,
// and what deleting a share with snapshots does.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "fake_storage/engine/share_snapshot_names.h"
#include "tests/fake_storage/error_code.h"
#include "tests/fake_storage/file_store_fixture.h"

namespace bai::storage {
namespace {

namespace fs = std::filesystem;
using bai::testing::kAcct;
using testing::code_of;

class ShareSnapshotTest : public FileStoreTest {
protected:
    ShareSnapshotTest() : FileStoreTest("data") {}

    void write_range(const std::string& path, std::uint64_t offset, const std::string& bytes) {
        auto writer = files->begin(false);
        writer->append(bytes);
        store->put_range(kAcct, "data", path, offset, *writer);
    }
    std::string read(const std::string& share, const std::string& path) {
        OpenFile f = store->open_file(kAcct, share, path);
        std::string out(f.info.size, '\0');
        EXPECT_EQ(::pread(f.fd, out.data(), out.size(), 0), static_cast<ssize_t>(out.size()));
        return out;
    }
    std::vector<std::string> names(const std::string& share, const std::string& path) {
        std::vector<std::string> out;
        for (const ShareEntry& e : store->list_directory(kAcct, share, path, {}).entries) out.push_back(e.name);
        return out;
    }
    std::vector<std::string> listed(bool snapshots, const std::string& marker = "", int max = 5000) {
        ListOptions o;
        o.snapshots = snapshots;
        o.marker = marker;
        o.max_results = max;
        std::vector<std::string> out;
        for (const ShareInfo& s : store->list_shares(kAcct, o).shares) out.push_back(s.name + "@" + s.snapshot);
        return out;
    }
};

TEST(ShareSnapshotNames, ValuesAreWrittenAsTheServiceWritesThem) {
    EXPECT_EQ(parse_share_snapshot("2020-01-15T23:54:16.0000000Z"), "2020-01-15T23:54:16.0000000Z");
    EXPECT_EQ(parse_share_snapshot("2020-01-15T23:54:16Z"), "2020-01-15T23:54:16.0000000Z");
    EXPECT_EQ(parse_share_snapshot("2020-01-15T23:54:16.5Z"), "2020-01-15T23:54:16.5000000Z");
    EXPECT_EQ(parse_share_snapshot("2020-01-16T01:54:16+02:00"), "2020-01-15T23:54:16.0000000Z");
    for (const char* bad : {"", "garbage", "2020-01-15", "2020-01-15T25:00:00Z", "2020-13-01T00:00:00Z",
                            "2020-01-15T23:54:16", "2020-01-15 23:54:16Z", "2020-01-15T23:54:16.Z",
                            "2020-01-15T23:54:16.0000000Zjunk", "2020-01-15T-1:54:16Z"}) {
        EXPECT_FALSE(parse_share_snapshot(bad)) << bad;
    }
    EXPECT_EQ(share_snapshot_key("s", "T"), "s/T");
    EXPECT_TRUE(is_share_snapshot_key("s/T"));
    EXPECT_FALSE(is_share_snapshot_key("s"));
    EXPECT_EQ(split_share_snapshot_key("s/T"), std::make_pair(std::string("s"), std::string("T")));
    EXPECT_EQ(split_share_snapshot_key("s"), std::make_pair(std::string("s"), std::string()));
}

TEST_F(ShareSnapshotTest, ASnapshotKeepsWhatTheShareHeldWhenItWasTaken) {
    store->create_directory(kAcct, "data", "dir", {{"k", "v"}}, {});
    store->create_file(kAcct, "data", "dir/a.txt", 5, {}, {{"m", "1"}}, {});
    write_range("dir/a.txt", 0, "hello");
    ShareInfo snap = store->snapshot_share(kAcct, "data", std::nullopt);
    ASSERT_FALSE(snap.snapshot.empty());
    EXPECT_EQ(snap.name, "data");
    EXPECT_EQ(snap.snapshot.substr(19), ".0000000Z") << "a share snapshot's time has no fraction";
    const std::string key = share_snapshot_key("data", snap.snapshot);

    // Later writes to the share: new bytes, a new file, a deletion, new metadata.
    write_range("dir/a.txt", 0, "HELLO");
    store->set_file_metadata(kAcct, "data", "dir/a.txt", {{"m", "2"}});
    store->create_file(kAcct, "data", "dir/b.txt", 1, {}, {}, {});
    store->set_share_metadata(kAcct, "data", {{"after", "yes"}});

    EXPECT_EQ(read(key, "dir/a.txt"), "hello");
    EXPECT_EQ(store->get_file(kAcct, key, "dir/a.txt").metadata, (Metadata{{"m", "1"}}));
    EXPECT_EQ(names(key, "dir"), (std::vector<std::string>{"a.txt"}));
    EXPECT_EQ(names("data", "dir"), (std::vector<std::string>{"a.txt", "b.txt"}));
    EXPECT_EQ(store->get_directory(kAcct, key, "dir").metadata, (Metadata{{"k", "v"}}));
    EXPECT_TRUE(store->get_share_snapshot(kAcct, "data", snap.snapshot).metadata.empty());
    store->delete_file(kAcct, "data", "dir/a.txt");
    EXPECT_EQ(read(key, "dir/a.txt"), "hello");
    EXPECT_EQ(read("data", "dir/b.txt"), std::string(1, '\0'));
}

TEST_F(ShareSnapshotTest, ItsFilesLieOutsideTheSharesDirectoryReadOnlyWithTheirHoles) {
    store->create_file(kAcct, "data", "sparse.bin", 3 * 1024 * 1024, {}, {}, {});
    write_range("sparse.bin", 2 * 1024 * 1024, "x");
    ShareInfo snap = store->snapshot_share(kAcct, "data", std::nullopt);
    const std::string key = share_snapshot_key("data", snap.snapshot);
    const fs::path copy = store->share_root(kAcct, key);
    EXPECT_EQ(copy.parent_path().parent_path().filename(), "share-snapshots");
    EXPECT_TRUE(fs::is_regular_file(copy / "sparse.bin"));
    EXPECT_EQ(std::distance(fs::directory_iterator(root), fs::directory_iterator()), 1) << "the share's directory gained nothing";
    struct stat st {};
    ASSERT_EQ(::stat((copy / "sparse.bin").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0444u);
    EXPECT_LT(static_cast<std::uint64_t>(st.st_blocks) * 512, 1024u * 1024) << "the copy filled its holes";
    auto ranges = store->list_ranges(kAcct, key, "sparse.bin", 0, 3 * 1024 * 1024 - 1);
    ASSERT_EQ(ranges.size(), 1u);
    EXPECT_LE(ranges[0].first, 2u * 1024 * 1024);
    EXPECT_GE(ranges[0].last, 2u * 1024 * 1024);
}

TEST_F(ShareSnapshotTest, SnapshotsAreListedOnlyWhenAskedOldestFirstBeforeTheirShare) {
    store->create_share(kAcct, "data-2", std::nullopt, {});
    ShareInfo first = store->snapshot_share(kAcct, "data", std::nullopt);
    ShareInfo second = store->snapshot_share(kAcct, "data", Metadata{{"tag", "2"}});
    EXPECT_LT(first.snapshot, second.snapshot) << "two snapshots in one second get two seconds";
    EXPECT_EQ(second.metadata, (Metadata{{"tag", "2"}}));
    EXPECT_NE(second.etag, first.etag) << "a snapshot given metadata has an ETag of its own";
    EXPECT_EQ(listed(false), (std::vector<std::string>{"data@", "data-2@"}));
    const std::vector<std::string> all{"data@" + first.snapshot, "data@" + second.snapshot, "data@", "data-2@"};
    EXPECT_EQ(listed(true), all);
    // Pages of one: each marker starts where the last page stopped.
    std::vector<std::string> paged;
    std::string marker;
    for (int i = 0; i < 10; ++i) {
        ListOptions o;
        o.snapshots = true;
        o.marker = marker;
        o.max_results = 1;
        SharePage page = store->list_shares(kAcct, o);
        for (const ShareInfo& s : page.shares) paged.push_back(s.name + "@" + s.snapshot);
        marker = page.next_marker;
        if (marker.empty()) break;
        EXPECT_EQ(marker.rfind("/" + std::string(kAcct) + "/data", 0), 0u) << "written as the service writes it";
    }
    EXPECT_EQ(paged, all);
}

TEST_F(ShareSnapshotTest, DeletingAShareWithSnapshotsNeedsThemIncludedAndNoneLeased) {
    ShareInfo snap = store->snapshot_share(kAcct, "data", std::nullopt);
    const std::string key = share_snapshot_key("data", snap.snapshot);
    EXPECT_EQ(code_of([&] { store->delete_share(kAcct, "data"); }), "409 ShareHasSnapshots");
    store->lease_share(kAcct, key, {LeaseAction::acquire, std::nullopt, std::nullopt, -1, std::nullopt});
    EXPECT_EQ(code_of([&] { store->delete_share(kAcct, "data", std::nullopt, true); }),
              "409 DeleteShareWhenSnapshotLeased");
    EXPECT_EQ(code_of([&] { store->delete_share(kAcct, key); }), "412 LeaseIdMissing");
    store->lease_share(kAcct, key, {LeaseAction::break_, std::nullopt, std::nullopt, std::nullopt, 0});
    const fs::path copy = store->share_root(kAcct, key);
    EXPECT_EQ(code_of([&] { store->delete_share(kAcct, "data", std::nullopt, true); }), "no error");
    EXPECT_FALSE(fs::exists(copy));
    EXPECT_FALSE(fs::exists(copy.parent_path()));
    EXPECT_TRUE(listed(true).empty());
    EXPECT_EQ(code_of([&] { store->get_share_snapshot(kAcct, "data", snap.snapshot); }), "404 ShareNotFound");
}

TEST_F(ShareSnapshotTest, OneSnapshotIsDeletedAloneAndAMissingOneIsNotFound) {
    ShareInfo snap = store->snapshot_share(kAcct, "data", std::nullopt);
    const std::string key = share_snapshot_key("data", snap.snapshot);
    EXPECT_EQ(code_of([&] { store->delete_share(kAcct, key); }), "no error");
    EXPECT_EQ(code_of([&] { store->delete_share(kAcct, key); }), "404 ShareSnapshotNotFound");
    EXPECT_EQ(code_of([&] { store->get_share_snapshot(kAcct, "data", snap.snapshot); }), "404 ShareSnapshotNotFound");
    EXPECT_EQ(code_of([&] { store->snapshot_share(kAcct, "nothing", std::nullopt); }), "404 ShareNotFound");
    EXPECT_EQ(code_of([&] { store->snapshot_share(kAcct, key, std::nullopt); }), "400 ShareSnapshotOperationNotSupported");
    EXPECT_EQ(listed(true), (std::vector<std::string>{"data@"}));
    EXPECT_EQ(code_of([&] { store->delete_share(kAcct, "data"); }), "no error");
}

TEST_F(ShareSnapshotTest, WhatANodesProcessesWroteIntoTheShareIsInTheSnapshot) {
    auto followed = store->follow_disk_writes(kAcct, "data");  // a node's bind mount of the share
    fs::create_directories(root / "run" / "out");
    std::ofstream(root / "run" / "out" / "model.txt") << "weights";
    ShareInfo snap = store->snapshot_share(kAcct, "data", std::nullopt);
    const std::string key = share_snapshot_key("data", snap.snapshot);
    EXPECT_EQ(names(key, "run/out"), (std::vector<std::string>{"model.txt"}));
    EXPECT_EQ(read(key, "run/out/model.txt"), "weights");
    std::ofstream(root / "run" / "out" / "model.txt", std::ios::trunc) << "newer weights";
    EXPECT_EQ(read(key, "run/out/model.txt"), "weights");
}

TEST_F(ShareSnapshotTest, ARangeAcknowledgedButNotYetWrittenIsInTheSnapshot) {
    store->create_file(kAcct, "data", "f.txt", 8, {}, {}, {});
    write_range("f.txt", 0, "aaaaaaaa");
    // A Put Range between its journal's commit and its write into the file (as a stop leaves it).
    db->prepare("INSERT INTO pending_ranges(account, share, path, offset, content_id, data) VALUES (?1, 'data', 'f.txt', 2, '', ?2)")
        .bind(1, kAcct)
        .bind_blob(2, "BB")
        .run();
    ShareInfo snap = store->snapshot_share(kAcct, "data", std::nullopt);
    EXPECT_EQ(read(share_snapshot_key("data", snap.snapshot), "f.txt"), "aaBBaaaa");
    EXPECT_EQ(read("data", "f.txt"), "aaaaaaaa");
    EXPECT_EQ(store->recover(), 1u);
    EXPECT_EQ(read("data", "f.txt"), "aaBBaaaa");
}

TEST_F(ShareSnapshotTest, AShareHasAtMostTwoHundredSnapshots) {
    // 199 snapshots' rows from years ago (taking them would take 199 seconds), then two more.
    for (int i = 0; i < 199; ++i) {
        char name[32];
        std::snprintf(name, sizeof name, "2001-01-01T00:%02d:%02d.0000000Z", i / 60, i % 60);
        db->prepare("INSERT INTO shares(account, name, etag, created, last_modified, quota) VALUES (?1, ?2, 'e', 0, 0, 5120)")
            .bind(1, kAcct)
            .bind(2, share_snapshot_key("data", name))
            .run();
    }
    EXPECT_EQ(code_of([&] { store->snapshot_share(kAcct, "data", std::nullopt); }), "no error");
    EXPECT_EQ(code_of([&] { store->snapshot_share(kAcct, "data", std::nullopt); }), "409 ShareSnapshotCountExceeded");
    EXPECT_EQ(listed(true).size(), 201u);
}

TEST_F(ShareSnapshotTest, WhatAStopLeftOfSnapshotsGoesAtTheNextStart) {
    ShareInfo snap = store->snapshot_share(kAcct, "data", std::nullopt);
    const fs::path kept = store->share_root(kAcct, share_snapshot_key("data", snap.snapshot));
    const fs::path orphan = store->share_root(kAcct, share_snapshot_key("data", "2001-01-01T00:00:00.0000000Z"));
    const fs::path gone_share = store->share_root(kAcct, share_snapshot_key("gone", "2001-01-01T00:00:00.0000000Z"));
    const fs::path scratch = dir / "storage" / "tmp" / "snapshot-0123456789abcdef";
    for (const fs::path& p : {orphan, gone_share, scratch}) {
        fs::create_directories(p / "sub");
        std::ofstream(p / "sub" / "f") << "x";
    }
    store->recover();
    EXPECT_TRUE(fs::is_directory(kept));
    EXPECT_FALSE(fs::exists(orphan));
    EXPECT_FALSE(fs::exists(gone_share.parent_path()));
    EXPECT_FALSE(fs::exists(scratch));
    EXPECT_EQ(listed(true), (std::vector<std::string>{"data@" + snap.snapshot, "data@"}));
}

}  // namespace
}  // namespace bai::storage
