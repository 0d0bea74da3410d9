// A share's directory can hold what its writers put there (a job's processes where the share is
// linked rather than mounted): symbolic links, in place of a file or of a directory the index
// knows, must not let the File REST API read, write, truncate, create or remove anything outside
// the share. Such a path answers as a missing resource, and the outside stays as it was.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "fake_storage/engine/storage_error.h"
#include "tests/fake_storage/file_store_fixture.h"

namespace bai::storage {
namespace {

namespace fs = std::filesystem;
using bai::testing::kAcct;

class ShareLinksTest : public FileStoreTest {
protected:
    ShareLinksTest() : FileStoreTest("data") {}

    void SetUp() override {
        FileStoreTest::SetUp();
        outside = dir / "outside";
        fs::create_directories(outside / "sub");
        std::ofstream(outside / "secret.txt") << "secret";
        std::ofstream(outside / "sub" / "f.txt") << "outside f";
        // Indexed through REST, then replaced on disk by links to the outside.
        store->create_file(kAcct, "data", "file.txt", 3, {}, {}, {});
        store->create_directory(kAcct, "data", "dir", {}, {});
        store->create_file(kAcct, "data", "dir/f.txt", 9, {}, {}, {});
        fs::remove(root / "file.txt");
        fs::create_symlink(outside / "secret.txt", root / "file.txt");
        fs::remove_all(root / "dir");
        fs::create_directory_symlink(outside / "sub", root / "dir");
    }
    std::string read(const fs::path& p) {
        std::ostringstream out;
        out << std::ifstream(p).rdbuf();
        return out.str();
    }
    template <typename Call>
    int status_of(Call call) {
        try {
            call();
        } catch (const StorageError& e) {
            return e.status();
        }
        return 0;
    }
    void expect_outside_untouched() {
        EXPECT_EQ(read(outside / "secret.txt"), "secret");
        EXPECT_EQ(read(outside / "sub" / "f.txt"), "outside f");
        std::vector<std::string> names;
        for (const auto& e : fs::directory_iterator(outside / "sub")) names.push_back(e.path().filename().string());
        EXPECT_EQ(names, std::vector<std::string>{"f.txt"});
    }

    fs::path outside;
};

TEST_F(ShareLinksTest, ReadsThroughALinkAnswerNotFound) {
    EXPECT_EQ(status_of([&] { store->open_file(kAcct, "data", "file.txt"); }), 404);
    EXPECT_EQ(status_of([&] { store->open_file(kAcct, "data", "dir/f.txt"); }), 404);
    EXPECT_EQ(status_of([&] { store->list_ranges(kAcct, "data", "dir/f.txt", 0, 8); }), 404);
    expect_outside_untouched();
}

TEST_F(ShareLinksTest, WritesThroughALinkChangeNothingOutside) {
    auto writer = files->begin(false);
    writer->append("XYZ");
    EXPECT_EQ(status_of([&] { store->put_range(kAcct, "data", "file.txt", 0, *writer); }), 404);
    auto second = files->begin(false);
    second->append("XYZ");
    EXPECT_EQ(status_of([&] { store->put_range(kAcct, "data", "dir/f.txt", 0, *second); }), 404);
    EXPECT_EQ(status_of([&] { store->clear_range(kAcct, "data", "dir/f.txt", 0, 4); }), 404);
    EXPECT_EQ(status_of([&] { store->set_file_properties(kAcct, "data", "file.txt", 0, std::nullopt, {}); }), 404);
    EXPECT_EQ(status_of([&] { store->set_file_properties(kAcct, "data", "dir/f.txt", 1, std::nullopt, {}); }), 404);
    EXPECT_NE(status_of([&] { store->create_file(kAcct, "data", "dir/new.txt", 5, {}, {}, {}); }), 0);
    EXPECT_NE(status_of([&] { store->create_directory(kAcct, "data", "dir/newdir", {}, {}); }), 0);
    expect_outside_untouched();
    EXPECT_FALSE(fs::exists(outside / "sub" / "newdir"));
}

TEST_F(ShareLinksTest, DeletesThroughALinkRemoveNothingOutside) {
    store->delete_file(kAcct, "data", "dir/f.txt");  // the index's entry goes; the outside file stays
    store->delete_file(kAcct, "data", "file.txt");   // the link itself may go, never its target
    expect_outside_untouched();
    EXPECT_FALSE(fs::is_symlink(root / "file.txt"));  // the link itself went
}

TEST_F(ShareLinksTest, FifosAndNamesTakenByOthersAreNotShareContent) {
    store->create_file(kAcct, "data", "pipe.bin", 4, {}, {}, {});
    fs::remove(root / "pipe.bin");
    ASSERT_EQ(::mkfifo((root / "pipe.bin").c_str(), 0644), 0);  // no writer: an open would wait
    EXPECT_EQ(status_of([&] { store->open_file(kAcct, "data", "pipe.bin"); }), 404);
    EXPECT_EQ(status_of([&] { store->set_file_properties(kAcct, "data", "pipe.bin", 0, std::nullopt, {}); }), 404);
    // Create Directory over a name a link holds: refused, not indexed as a directory.
    fs::create_directory_symlink(outside / "sub", root / "taken");
    EXPECT_EQ(status_of([&] { store->create_directory(kAcct, "data", "taken", {}, {}); }), 409);
    expect_outside_untouched();
}

TEST_F(ShareLinksTest, AdoptionDoesNotWalkThroughALinkedDirectory) {
    store->adopt_disk_changes(kAcct, "data", "");
    std::vector<std::string> names;
    for (const ShareEntry& e : store->list_directory(kAcct, "data", "", {}).entries) names.push_back(e.name);
    EXPECT_EQ(names, std::vector<std::string>{});  // links are not share content
    // An index that still believes in a directory does not walk where its link points.
    store->create_directory(kAcct, "data", "real", {}, {});
    fs::remove_all(root / "real");
    fs::create_directory_symlink(outside / "sub", root / "real");
    store->adopt_disk_changes(kAcct, "data", "real");
    EXPECT_EQ(status_of([&] { store->get_file(kAcct, "data", "real/f.txt"); }), 404);
}

}  // namespace
}  // namespace bai::storage
