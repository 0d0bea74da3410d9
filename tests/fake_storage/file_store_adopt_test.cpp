// FileStore::adopt_disk_changes: what other writers leave in a share's directory joins the index.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "fake_storage/engine/storage_error.h"
#include "tests/fake_storage/file_store_fixture.h"

namespace bai::storage {
namespace {

namespace fs = std::filesystem;
using bai::testing::kAcct;

class AdoptTest : public FileStoreTest {
protected:
    AdoptTest() : FileStoreTest("logs") {}

    void write(const std::string& path, const std::string& text) {
        fs::create_directories((root / path).parent_path());
        std::ofstream(root / path, std::ios::trunc) << text;
    }
    std::vector<std::string> names(const std::string& path) {
        std::vector<std::string> out;
        for (const ShareEntry& e : store->list_directory(kAcct, "logs", path, {}).entries) out.push_back(e.name);
        return out;
    }
};

TEST_F(AdoptTest, NewFilesAndTheirDirectoriesJoin) {
    write("a/b/stdouterr/stdout.txt", "hello\n");
    write("a/b/stdouterr/ranks/0.txt", "");
    write("elsewhere.txt", "x");
    EXPECT_EQ(store->adopt_disk_changes(kAcct, "logs", "a/b/stdouterr"), 6u);  // a, b, stdouterr, stdout, ranks, 0.txt
    EXPECT_EQ(names(""), (std::vector<std::string>{"a"}));  // outside the path: left alone
    EXPECT_EQ(names("a/b/stdouterr"), (std::vector<std::string>{"ranks", "stdout.txt"}));
    EXPECT_EQ(store->get_file(kAcct, "logs", "a/b/stdouterr/stdout.txt").size, 6u);
    EXPECT_EQ(store->adopt_disk_changes(kAcct, "logs", "a/b/stdouterr"), 0u);
}

TEST_F(AdoptTest, AListingAdoptsOnlyTheEntriesItShows) {
    write("out/model.bin", "weights");
    write("out/logs/deep/epoch1.txt", "loss 1.0\n");
    EXPECT_EQ(store->adopt_disk_changes(kAcct, "logs", "out", /*whole_subtree=*/false), 3u);  // out, model.bin, logs
    EXPECT_EQ(names("out"), (std::vector<std::string>{"logs", "model.bin"}));
    EXPECT_TRUE(names("out/logs").empty()) << "the subdirectory's contents were walked";
    EXPECT_EQ(store->adopt_disk_changes(kAcct, "logs", "out/logs", false), 1u);  // deep
    EXPECT_EQ(names("out/logs"), (std::vector<std::string>{"deep"}));
    EXPECT_EQ(store->adopt_disk_changes(kAcct, "logs", "out"), 1u);  // the whole subtree: epoch1.txt
}

TEST_F(AdoptTest, GrownFilesGetANewSizeAndEtagAndVanishedOnesGo) {
    write("d/out.txt", "1");
    store->adopt_disk_changes(kAcct, "logs", "d");
    ShareEntry before = store->get_file(kAcct, "logs", "d/out.txt");
    write("d/out.txt", "1234");
    write("d/gone.txt", "");
    EXPECT_EQ(store->adopt_disk_changes(kAcct, "logs", "d"), 2u);  // out.txt grew, gone.txt is new
    fs::remove(root / "d/gone.txt");
    EXPECT_EQ(store->adopt_disk_changes(kAcct, "logs", "d"), 1u);  // gone.txt went
    ShareEntry after = store->get_file(kAcct, "logs", "d/out.txt");
    EXPECT_EQ(after.size, 4u);
    EXPECT_NE(after.etag, before.etag);
    EXPECT_EQ(names("d"), (std::vector<std::string>{"out.txt"}));
}

TEST_F(AdoptTest, FilesWrittenThroughTheStoreAreNotTouched) {
    store->create_directory(kAcct, "logs", "rest", {}, {});
    ShareEntry made = store->create_file(kAcct, "logs", "rest/f.txt", 3, {}, {}, {});
    EXPECT_EQ(store->adopt_disk_changes(kAcct, "logs", "rest"), 0u);
    EXPECT_EQ(store->get_file(kAcct, "logs", "rest/f.txt").etag, made.etag);
}

TEST_F(AdoptTest, OneEntryAddedRewrittenAndRemoved) {
    write("x/y/new.txt", "abc");
    write("x/y/other.txt", "not this one");
    EXPECT_EQ(store->adopt_entry(kAcct, "logs", "x/y/new.txt", false, false), 3u);  // x, y, new.txt
    EXPECT_EQ(names("x/y"), (std::vector<std::string>{"new.txt"}));
    ShareEntry first = store->get_file(kAcct, "logs", "x/y/new.txt");
    EXPECT_EQ(first.size, 3u);
    EXPECT_EQ(store->adopt_entry(kAcct, "logs", "x/y/new.txt", false, false), 0u);  // nothing new
    write("x/y/new.txt", "xyz");  // same size, same second
    EXPECT_EQ(store->adopt_entry(kAcct, "logs", "x/y/new.txt", true, false), 1u);  // told it was written
    EXPECT_NE(store->get_file(kAcct, "logs", "x/y/new.txt").etag, first.etag);
    fs::remove(root / "x/y/new.txt");
    EXPECT_EQ(store->adopt_entry(kAcct, "logs", "x/y/new.txt", false, false), 1u);
    EXPECT_TRUE(names("x/y").empty());
}

TEST_F(AdoptTest, ADirectoryRenamedIntoPlaceJoinsWithItsContents) {
    write("moved/a/1.txt", "1");
    write("moved/b.txt", "22");
    EXPECT_EQ(store->adopt_entry(kAcct, "logs", "moved", false, true), 4u);
    EXPECT_EQ(names("moved"), (std::vector<std::string>{"a", "b.txt"}));
    EXPECT_EQ(store->get_file(kAcct, "logs", "moved/a/1.txt").size, 1u);
    fs::remove_all(root / "moved");
    EXPECT_EQ(store->adopt_entry(kAcct, "logs", "moved", false, false), 1u);  // the subtree goes in one
    EXPECT_TRUE(names("").empty());
}

TEST_F(AdoptTest, NoteWriteUpdatesAKnownFileAndAddsAnUnknownOne) {
    write("w/known.txt", "12");
    store->adopt_entry(kAcct, "logs", "w/known.txt", false, false);
    ShareEntry before = store->get_file(kAcct, "logs", "w/known.txt");
    write("w/known.txt", "1234");
    store->note_write(kAcct, "logs", "w/known.txt");
    ShareEntry after = store->get_file(kAcct, "logs", "w/known.txt");
    EXPECT_EQ(after.size, 4u);
    EXPECT_NE(after.etag, before.etag);
    EXPECT_GE(after.last_modified, before.last_modified);
    write("w/new.txt", "abc");
    store->note_write(kAcct, "logs", "w/new.txt");
    EXPECT_EQ(store->get_file(kAcct, "logs", "w/new.txt").size, 3u);
}

TEST_F(AdoptTest, MissingPathOrShare) {
    EXPECT_EQ(store->adopt_disk_changes(kAcct, "logs", "no/such"), 0u);
    EXPECT_ANY_THROW(store->adopt_disk_changes(kAcct, "nosuchshare", ""));
}

// A file a mount passes through to the kernel: reads of its entry catch up with the disk while it
// is registered, and only then.
TEST_F(AdoptTest, FilesWrittenDirectlyAreCaughtUpWhenRead) {
    write("run/log.txt", "1");
    store->adopt_disk_changes(kAcct, "logs", "run");
    struct stat st {};
    ASSERT_EQ(::stat((root / "run/log.txt").c_str(), &st), 0);
    write("run/log.txt", "12345");
    EXPECT_EQ(store->get_file(kAcct, "logs", "run/log.txt").size, 1u);  // not registered: not looked at
    store->begin_direct_writes(st.st_dev, st.st_ino);
    store->begin_direct_writes(st.st_dev, st.st_ino);  // a second open file of it
    const ShareEntry grown = store->get_file(kAcct, "logs", "run/log.txt");
    EXPECT_EQ(grown.size, 5u);
    EXPECT_EQ(store->get_file(kAcct, "logs", "run/log.txt").etag, grown.etag);  // nothing new: same ETag
    write("run/log.txt", "abcde");  // same size, a later mtime (set: coarse clocks may not move)
    timespec later[2] = {{0, UTIME_OMIT}, {st.st_mtim.tv_sec + 10, 0}};
    ASSERT_EQ(::utimensat(AT_FDCWD, (root / "run/log.txt").c_str(), later, 0), 0);
    const ShareEntry rewritten = store->list_directory(kAcct, "logs", "run", {}).entries.at(0);
    EXPECT_NE(rewritten.etag, grown.etag);
    EXPECT_EQ(rewritten.size, 5u);
    store->end_direct_writes(st.st_dev, st.st_ino);
    write("run/log.txt", "abcdefg");
    EXPECT_EQ(store->get_file(kAcct, "logs", "run/log.txt").size, 7u);  // one open file left
    store->end_direct_writes(st.st_dev, st.st_ino);
    write("run/log.txt", "abcdefghi");
    EXPECT_EQ(store->get_file(kAcct, "logs", "run/log.txt").size, 7u);
}

// A share bind-mounted on a node: what is written in its directory is seen by each operation
// on a path, without anyone calling adopt_disk_changes.
TEST_F(AdoptTest, AFollowedShareIsCaughtUpByEachOperation) {
    std::shared_ptr<void> token = store->follow_disk_writes(kAcct, "logs");
    write("run/epoch1/model.bin", "weights");
    EXPECT_EQ(store->get_file(kAcct, "logs", "run/epoch1/model.bin").size, 7u);
    EXPECT_EQ(store->get_directory(kAcct, "logs", "RUN").name, "run");  // names are case-insensitive
    write("run/epoch2/model.bin", "w2");
    EXPECT_EQ(names("run"), (std::vector<std::string>{"epoch1", "epoch2"}));
    const std::string etag = store->get_file(kAcct, "logs", "run/epoch1/model.bin").etag;
    EXPECT_EQ(store->get_file(kAcct, "logs", "run/epoch1/model.bin").etag, etag);  // unchanged: the same ETag
    write("run/epoch1/model.bin", "more weights");
    ShareEntry grown = store->get_file(kAcct, "logs", "run/epoch1/model.bin");
    EXPECT_EQ(grown.size, 12u);
    EXPECT_NE(grown.etag, etag);
    store->create_file(kAcct, "logs", "run/epoch2/notes.txt", 3, {}, {}, {});  // in a directory a job made
    fs::remove(root / "run" / "epoch2" / "model.bin");
    EXPECT_THROW(store->get_file(kAcct, "logs", "run/epoch2/model.bin"), StorageError);
    EXPECT_EQ(names("run/epoch2"), (std::vector<std::string>{"notes.txt"}));
    // A listing adopts at its first page; its continuations list what that page saw.
    for (int i = 0; i < 3; ++i) write("pages/f" + std::to_string(i) + ".txt", "x");
    ListOptions first;
    first.max_results = 2;
    DirectoryPage page = store->list_directory(kAcct, "logs", "pages", first);
    ASSERT_EQ(page.entries.size(), 2u);
    write("pages/f9.txt", "late");
    ListOptions next;
    next.marker = page.next_marker;
    std::vector<std::string> rest;
    for (const ShareEntry& e : store->list_directory(kAcct, "logs", "pages", next).entries) rest.push_back(e.name);
    EXPECT_EQ(rest, std::vector<std::string>{"f2.txt"});
    EXPECT_EQ(names("pages").size(), 4u);  // a new listing sees it
    // Unfollowed: the last token's release adopts the whole share once; later disk writes wait.
    write("late/a.txt", "a");
    token.reset();
    EXPECT_EQ(store->get_file(kAcct, "logs", "late/a.txt").size, 1u);
    write("later/b.txt", "b");
    EXPECT_THROW(store->get_file(kAcct, "logs", "later/b.txt"), StorageError);
}

}  // namespace
}  // namespace bai::storage
