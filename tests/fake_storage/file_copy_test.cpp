// Copy File in the FileStore: the copy's bytes (holes kept), its copy properties, and what a
// refused copy leaves (nothing).
#include <gtest/gtest.h>
#include <unistd.h>

#include "tests/fake_storage/error_code.h"
#include "tests/fake_storage/file_store_fixture.h"

namespace bai::storage {
namespace {

using bai::testing::kAcct;
using testing::code_of;

class FileCopyTest : public FileStoreTest {
protected:
    FileCopyTest() : FileStoreTest("data") {}

    void SetUp() override {
        FileStoreTest::SetUp();
        store->create_file(kAcct, "data", "src.bin", 3 * 1024 * 1024, {}, {{"m", "1"}}, {});
        auto writer = files->begin(false);
        writer->append(std::string(512, 'x'));
        store->put_range(kAcct, "data", "src.bin", 2 * 1024 * 1024, *writer);
    }
    ShareEntry copy(const std::string& to, const std::optional<std::string>& lease_id = std::nullopt,
                    bool create_new_only = false) {
        OpenFile source = store->open_file(kAcct, "data", "src.bin");
        return store->copy_file(kAcct, "data", to, copy_from(source), source.info.content, source.info.metadata, source.info.smb,
                                {}, {"copy-1", "http://127.0.0.1/devstoreaccount1/data/src.bin"}, create_new_only,
                                lease_id);
    }
};

TEST_F(FileCopyTest, TheCopyHoldsTheSourcesBytesAndRanges) {
    ShareEntry made = copy("dst.bin");
    EXPECT_EQ(made.size, 3u * 1024 * 1024);
    EXPECT_EQ(made.metadata, (Metadata{{"m", "1"}}));
    EXPECT_EQ(store->list_ranges(kAcct, "data", "dst.bin", 0, made.size - 1),
              store->list_ranges(kAcct, "data", "src.bin", 0, made.size - 1));
    OpenFile f = store->open_file(kAcct, "data", "dst.bin");
    std::string bytes(512, '\0');
    ASSERT_EQ(::pread(f.fd, bytes.data(), bytes.size(), 2 * 1024 * 1024), 512);
    EXPECT_EQ(bytes, std::string(512, 'x'));
    // The copy properties are kept with the file, until a Create File makes it anew.
    ShareEntry read = store->get_file(kAcct, "data", "dst.bin");
    EXPECT_EQ(read.copy.id, "copy-1");
    EXPECT_EQ(read.copy.bytes, 3u * 1024 * 1024);
    store->create_file(kAcct, "data", "dst.bin", 1, {}, {}, {});
    EXPECT_TRUE(store->get_file(kAcct, "data", "dst.bin").copy.id.empty());
}

TEST_F(FileCopyTest, ARefusedCopyLeavesNothing) {
    store->create_file(kAcct, "data", "held.bin", 7, {}, {}, {});
    LeaseRequest acquire{LeaseAction::acquire, std::nullopt, std::string("6bb1a5a4-4c43-4f4b-9a5b-2b5c0c3b1d10"), -1,
                         std::nullopt};
    store->lease_file(kAcct, "data", "held.bin", acquire);
    EXPECT_EQ(code_of([&] { copy("held.bin"); }), "412 LeaseIdMissing");
    EXPECT_EQ(store->get_file(kAcct, "data", "held.bin").size, 7u);
    EXPECT_EQ(code_of([&] { copy("held.bin", std::nullopt, true); }), "403 AuthorizationPermissionMismatch");
    store->create_directory(kAcct, "data", "dir", {}, {});
    EXPECT_EQ(code_of([&] { copy("dir"); }), "409 ResourceAlreadyExists");
    EXPECT_EQ(code_of([&] { copy("nowhere/dst.bin"); }), "404 ParentNotFound");
    // Nothing of the refused copies is left in tmp/ or the share.
    size_t scratch = 0;
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir / "storage" / "tmp")) ++scratch;
    EXPECT_EQ(scratch, 0u);
    EXPECT_FALSE(std::filesystem::exists(root / "nowhere"));
    EXPECT_EQ(copy("held.bin", std::string("6bb1a5a4-4c43-4f4b-9a5b-2b5c0c3b1d10")).size, 3u * 1024 * 1024);
}

}  // namespace
}  // namespace bai::storage
