// A file's written ranges (FileRanges, and the FileStore keeping them with each file through
// writes, clears, resizes, snapshots and copies), the SDDL check and permission keys, and a
// share's permissions in the store.
#include <gtest/gtest.h>

#include <cstdio>

#include "fake_storage/engine/file_ranges.h"
#include "fake_storage/engine/share_snapshot_names.h"
#include "fake_storage/file/file_permissions.h"
#include "tests/fake_storage/error_code.h"
#include "tests/fake_storage/file_store_fixture.h"

namespace bai::storage {
namespace {

using bai::testing::kAcct;
using testing::code_of;
using Listed = FileRanges::Listed;

TEST(FileRangesTest, WritesJoinWhereTheyTouchAndClearsSplitThem) {
    FileRanges r;
    r.write(0, 512, 1);
    r.write(1024, 1536, 2);
    EXPECT_EQ(r.list(0, 2047), (std::vector<Listed>{{0, 511}, {1024, 1535}}));
    r.write(512, 1024, 3);  // adjacent on both sides
    EXPECT_EQ(r.list(0, 2047), (std::vector<Listed>{{0, 1535}}));
    r.clear(100, 200, 4);
    EXPECT_EQ(r.list(0, 2047), (std::vector<Listed>{{0, 99}, {200, 1535}}));
    EXPECT_EQ(r.list(150, 250), (std::vector<Listed>{{200, 250}}));
    r.truncate(1000);
    EXPECT_EQ(r.list(0, 2047), (std::vector<Listed>{{0, 99}, {200, 999}}));
    EXPECT_EQ(r.last_change(), 4);
}

TEST(FileRangesTest, ChangesSinceAPointAreRangesWhereWrittenAndClearedWhereNot) {
    FileRanges r;
    r.write(0, 1536, 10);
    r.clear(512, 1024, 11);
    EXPECT_EQ(r.changed_since(0, 0, 2047), (std::vector<Listed>{{0, 511}, {512, 1023, true}, {1024, 1535}}));
    EXPECT_EQ(r.changed_since(10, 0, 2047), (std::vector<Listed>{{512, 1023, true}}));
    EXPECT_TRUE(r.changed_since(11, 0, 2047).empty());
}

TEST(FileRangesTest, TextRoundTripsAndRefusesWhatItDoesNotWrite) {
    FileRanges r;
    r.write(5, 10, 1);
    r.clear(7, 8, 2);
    auto back = FileRanges::from_text(r.to_text());
    ASSERT_TRUE(back);
    EXPECT_EQ(back->list(0, 100), r.list(0, 100));
    EXPECT_EQ(back->last_change(), 2);
    EXPECT_TRUE(FileRanges::from_text(";"));
    EXPECT_EQ(r.to_text(), "5-7,8-10;5-7@1,7-8@2,8-10@1");
    for (const char* bad : {"", "5-1;", "0-5,3-9;", "0-5,5-9;", ";0-1", ";0-1@", "-1-2;", "0-5,;", "0-5;1-2@3,0-1@4",
                            "0-5 ;", "x;", "0-5;;", R"({"d":[],"c":[]})"}) {
        EXPECT_FALSE(FileRanges::from_text(bad)) << bad;
    }
}

TEST(FilePermissionsTest, SddlIsCheckedAndKeyedByItsText) {
    for (const char* good : {"O:SYG:SYD:(A;;FA;;;SY)",
                             "O:S-1-5-21-2127521184-1604012920-1887927527-21560751G:S-1-5-21-2127521184-1604012920-"
                             "1887927527-513D:AI(A;;FA;;;SY)(A;;FA;;;BA)(A;;0x1200a9;;;S-1-5-21-397955417-626881126-"
                             "188441444-3053964)",
                             "D:P(A;OICI;GA;;;BA)S:(AU;SAFA;FA;;;WD)", "G:BA"}) {
        EXPECT_TRUE(is_valid_sddl(good)) << good;
        EXPECT_TRUE(is_permission_key(permission_key_for(good))) << good;
    }
    for (const char* bad : {"", "abcde", "O:", "O:SYO:SY", "X:SY", "O:S-1", "D:(A;;FA;;;SY", "D:(A;;FA;;SY)",
                            "D:(A;;FA;;;S-1-x)", "D:(A;;;;;SY)", "O:SY junk", "D:(A;;FA;not-a-guid;;SY)"}) {
        EXPECT_FALSE(is_valid_sddl(bad)) << bad;
    }
    EXPECT_EQ(permission_key_for("O:SYG:SY"), permission_key_for("O:SYG:SY"));
    EXPECT_NE(permission_key_for("O:SYG:SY"), permission_key_for("O:BAG:SY"));
    EXPECT_FALSE(is_permission_key("12"));
    EXPECT_FALSE(is_permission_key("1*2*3"));
    EXPECT_FALSE(is_permission_key("*2"));
}

class FileRangesStoreTest : public FileStoreTest {
protected:
    FileRangesStoreTest() : FileStoreTest("data") {}

    void write(const std::string& path, std::uint64_t offset, std::size_t n) {
        auto writer = files->begin(false);
        writer->append(std::string(n, 'x'));
        store->put_range(kAcct, "data", path, offset, *writer);
    }
};

TEST_F(FileRangesStoreTest, TheStoreListsWhatWasWrittenThroughEveryChange) {
    store->create_file(kAcct, "data", "f", 4096, {}, {}, {});
    write("f", 0, 512);
    write("f", 1024, 512);
    EXPECT_EQ(store->list_ranges(kAcct, "data", "f", 0, 4095), (std::vector<Listed>{{0, 511}, {1024, 1535}}));
    ShareInfo snap = store->snapshot_share(kAcct, "data", std::nullopt);
    const std::string key = share_snapshot_key("data", snap.snapshot);
    store->clear_range(kAcct, "data", "f", 0, 512);
    EXPECT_EQ(store->list_ranges(kAcct, "data", "f", 0, 4095), (std::vector<Listed>{{1024, 1535}}));
    EXPECT_EQ(store->list_ranges(kAcct, key, "f", 0, 4095), (std::vector<Listed>{{0, 511}, {1024, 1535}}))
        << "the snapshot's copy keeps what it held";
    EXPECT_EQ(store->list_ranges(kAcct, "data", "f", 0, 4095, key), (std::vector<Listed>{{0, 511, true}}));
    store->set_file_properties(kAcct, "data", "f", 1200, std::nullopt, {});
    EXPECT_EQ(store->list_ranges(kAcct, "data", "f", 0, 4095), (std::vector<Listed>{{1024, 1199}}));
    store->create_file(kAcct, "data", "f", 4096, {}, {}, {});
    EXPECT_TRUE(store->list_ranges(kAcct, "data", "f", 0, 4095).empty()) << "a file made anew holds nothing";
}

TEST_F(FileRangesStoreTest, AFileAMountWroteListsItsDataOnDisk) {
    store->create_file(kAcct, "data", "f", 64 * 1024, {}, {}, {});
    write("f", 0, 512);
    {  // a mount's write: the bytes on disk, then the store told of them
        std::FILE* f = std::fopen((root / "f").c_str(), "r+b");
        ASSERT_NE(f, nullptr);
        std::fseek(f, 32 * 1024, SEEK_SET);
        std::fputs("written through a mount", f);
        std::fclose(f);
    }
    store->note_write(kAcct, "data", "f");
    auto ranges = store->list_ranges(kAcct, "data", "f", 0, 64 * 1024 - 1);
    ASSERT_EQ(ranges.size(), 2u) << "the blocks holding data, not the ranges kept before";
    EXPECT_EQ(ranges[0].first, 0u);
    EXPECT_LE(ranges[1].first, 32u * 1024);
    EXPECT_GE(ranges[1].last, 32u * 1024 + 22);
    write("f", 40 * 1024, 512);  // still unknown: a REST write does not make the mount's bytes known
    EXPECT_EQ(store->list_ranges(kAcct, "data", "f", 0, 64 * 1024 - 1).size(), 3u);
}

TEST_F(FileRangesStoreTest, PermissionsAreTheSharesAndGoWithIt) {
    const std::string sddl = "O:SYG:SYD:(A;;FA;;;SY)";
    const std::string key = permission_key_for(sddl);
    store->create_permission(kAcct, "data", key, sddl);
    EXPECT_EQ(store->get_permission(kAcct, "data", key), sddl);
    EXPECT_EQ(store->get_permission(kAcct, "data", "1*2"), std::nullopt);
    ShareInfo snap = store->snapshot_share(kAcct, "data", std::nullopt);
    EXPECT_EQ(store->get_permission(kAcct, share_snapshot_key("data", snap.snapshot), key), sddl);
    EXPECT_EQ(code_of([&] { store->create_permission(kAcct, "missing", key, sddl); }), "404 ShareNotFound");
    store->create_share(kAcct, "other", std::nullopt, {});
    EXPECT_EQ(store->get_permission(kAcct, "other", key), std::nullopt);
    SmbUpdate smb;
    smb.permission_key = key;
    EXPECT_EQ(store->create_file(kAcct, "data", "f", 1, {}, {}, smb).permission_key, key);
    store->delete_share(kAcct, "data", std::nullopt, true);
    store->create_share(kAcct, "data", std::nullopt, {});
    EXPECT_EQ(store->get_permission(kAcct, "data", key), std::nullopt) << "a deleted share's permissions went with it";
}

}  // namespace
}  // namespace bai::storage
