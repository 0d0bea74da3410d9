// Share soft delete in the FileStore: a deleted share kept out of sight under its version, listed
// only when asked, brought back whole (files on disk, rows, snapshots), the refusals that change
// nothing, and the purge of those whose retention ran out; the versions' names.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <fstream>

#include "fake_storage/engine/share_snapshot_names.h"
#include "tests/fake_storage/error_code.h"
#include "tests/fake_storage/file_store_fixture.h"

namespace bai::storage {
namespace {

namespace fs = std::filesystem;
using bai::testing::kAcct;
using testing::code_of;

class ShareSoftDeleteTest : public FileStoreTest {
protected:
    ShareSoftDeleteTest() : FileStoreTest("data") {}

    void write(const std::string& path, const std::string& bytes) {
        store->create_file(kAcct, "data", path, bytes.size(), {}, {}, {});
        auto writer = files->begin(false);
        writer->append(bytes);
        store->put_range(kAcct, "data", path, 0, *writer);
    }
    std::string read(const std::string& share, const std::string& path) {
        OpenFile f = store->open_file(kAcct, share, path);
        std::string out(f.info.size, '\0');
        EXPECT_EQ(::pread(f.fd, out.data(), out.size(), 0), static_cast<ssize_t>(out.size()));
        return out;
    }
    std::vector<ShareInfo> deleted() {
        std::vector<ShareInfo> out;
        for (ShareInfo& s : store->list_shares(kAcct, {}, true).shares) {
            if (!s.deleted_version.empty()) out.push_back(std::move(s));
        }
        return out;
    }
    time::TimePoint long_ago() { return time::now() - std::chrono::hours(24 * 7); }
};

TEST_F(ShareSoftDeleteTest, VersionsAreTheDeletionsFiletimeInHex) {
    // 2020-10-07T02:07:06.xxx: the recorded service's version of a share deleted then.
    auto t = deleted_share_time("01D69C4E8E6FB05B");
    ASSERT_TRUE(t.has_value());
    EXPECT_EQ(time::format_iso8601(*t, 0), "2020-10-07T02:07:06Z");
    EXPECT_EQ(deleted_share_version(*t), "01D69C4E8E6FB05B");
    EXPECT_TRUE(deleted_share_time("01d69c4e8e6fb05b").has_value());
    for (const char* bad : {"", "01D69C4E8E6FB05", "01D69C4E8E6FB05BB", "01D69C4E8E6FB0G5", "0000000000000000"}) {
        EXPECT_FALSE(deleted_share_time(bad).has_value()) << bad;
    }
    EXPECT_EQ(split_deleted_share_key(deleted_share_key("data", "01D69C4E8E6FB05B")),
              (std::pair<std::string, std::string>{"data", "01D69C4E8E6FB05B"}));
    EXPECT_EQ(split_deleted_share_key("data"), (std::pair<std::string, std::string>{"data", ""}));
}

TEST_F(ShareSoftDeleteTest, ADeletedShareIsKeptOutOfSightAndComesBackWhole) {
    store->create_directory(kAcct, "data", "dir", {}, {});
    write("dir/model.bin", "weights");
    ShareInfo snapshot = store->snapshot_share(kAcct, "data", std::nullopt);
    store->delete_share(kAcct, "data", std::nullopt, true, true);
    EXPECT_EQ(code_of([&] { store->get_share(kAcct, "data"); }), "404 ShareNotFound");
    EXPECT_FALSE(fs::exists(root));  // no mount or job sees it
    EXPECT_TRUE(store->list_shares(kAcct, {}).shares.empty());
    auto gone = deleted();
    ASSERT_EQ(gone.size(), 1u);
    EXPECT_EQ(gone[0].name, "data");
    EXPECT_TRUE(deleted_share_time(gone[0].deleted_version).has_value());
    // A new share of the name, deleted too: two versions, listed before a live share of the name.
    store->create_share(kAcct, "data", std::nullopt, {});
    store->delete_share(kAcct, "data", std::nullopt, false, true);
    store->create_share(kAcct, "data", std::nullopt, {});
    auto listed = store->list_shares(kAcct, {}, true).shares;
    ASSERT_EQ(listed.size(), 3u);
    EXPECT_FALSE(listed[0].deleted_version.empty());
    EXPECT_FALSE(listed[1].deleted_version.empty());
    EXPECT_TRUE(listed[2].deleted_version.empty());
    EXPECT_EQ(code_of([&] { store->undelete_share(kAcct, "data", "data", gone[0].deleted_version, long_ago()); }),
              "409 ShareAlreadyExists");
    store->delete_share(kAcct, "data", std::nullopt, false, false);  // for good: not kept
    EXPECT_EQ(deleted().size(), 2u);
    ShareInfo back = store->undelete_share(kAcct, "data", "data", gone[0].deleted_version, long_ago());
    EXPECT_NE(back.etag, gone[0].etag);
    EXPECT_EQ(read("data", "dir/model.bin"), "weights");
    std::ifstream on_disk(root / "dir" / "model.bin");
    std::string text((std::istreambuf_iterator<char>(on_disk)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text, "weights");
    EXPECT_EQ(read(share_snapshot_key("data", snapshot.snapshot), "dir/model.bin"), "weights");
    EXPECT_EQ(deleted().size(), 1u);
    EXPECT_EQ(code_of([&] { store->undelete_share(kAcct, "other", "data", gone[0].deleted_version, long_ago()); }),
              "404 ShareNotFound");
}

TEST_F(ShareSoftDeleteTest, RefusedDeletesKeepNothingAndRetentionRunsOut) {
    store->snapshot_share(kAcct, "data", std::nullopt);
    EXPECT_EQ(code_of([&] { store->delete_share(kAcct, "data", std::nullopt, false, true); }), "409 ShareHasSnapshots");
    EXPECT_TRUE(deleted().empty());
    EXPECT_TRUE(fs::exists(root));
    store->delete_share(kAcct, "data", std::nullopt, true, true);
    ASSERT_EQ(deleted().size(), 1u);
    // Kept only from now on: the share deleted before is purged, rows and files.
    store->purge_deleted_shares(kAcct, time::now() + std::chrono::seconds(1));
    EXPECT_TRUE(deleted().empty());
    const fs::path kept = files->root() / kAcct / "deleted-shares";
    EXPECT_TRUE(!fs::exists(kept) || fs::is_empty(kept));
}

}  // namespace
}  // namespace bai::storage
