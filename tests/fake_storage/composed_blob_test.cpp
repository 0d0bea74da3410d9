// Put Block List of large blocks keeps the staged blocks as the blob's parts: what readers see,
// which files live and die with the blob, and when the blocks are copied instead.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/fake_storage/blob_store_fixture.h"

namespace bai::storage {
namespace {

using bai::testing::kAcct;

std::string id(const std::string& name) { return crypto::base64_encode(name); }

// Distinct bytes per block, so that a part read at the wrong place shows.
std::string pattern(char first, size_t size) {
    std::string s(size, '\0');
    for (size_t i = 0; i < size; ++i) s[i] = static_cast<char>(first + i % 23);
    return s;
}

class ComposedBlobTest : public BlobStoreTest {
protected:
    // Stages blocks b00000.. of `size` bytes each and commits them in order; returns the bytes.
    std::string commit_blocks(const std::string& blob, size_t count, size_t size) {
        std::string all;
        std::vector<BlockRef> refs;
        for (size_t i = 0; i < count; ++i) {
            std::string body = pattern(static_cast<char>('A' + i % 26), size);
            std::string name = std::to_string(i);
            name.insert(0, 5 - name.size(), '0');  // block ids of a blob have one length
            name.insert(0, 1, 'b');
            stage(blob, name, body);
            refs.push_back({id(name), BlockListType::latest});
            all += body;
        }
        store->put_block_list(kAcct, "data", blob, refs, {}, {}, {});
        return all;
    }
    size_t files_on_disk() {
        size_t n = 0;
        for (const auto& e : std::filesystem::recursive_directory_iterator(dir / "storage")) {
            n += e.is_regular_file() ? 1 : 0;
        }
        return n;
    }
    size_t orphans() {
        auto ids = store->live_content_ids();
        return files->sweep({ids.begin(), ids.end()});
    }
};

constexpr size_t kBlock = 100 * 1024;

TEST_F(ComposedBlobTest, LargeStagedBlocksBecomeTheBlobWithoutACopy) {
    std::string bytes = commit_blocks("big", 3, kBlock);
    BlobInfo info = store->get_blob(kAcct, "data", "big");
    EXPECT_TRUE(info.composed);
    EXPECT_TRUE(info.content_id.empty());
    EXPECT_EQ(info.size, 3 * kBlock);
    EXPECT_EQ(files_on_disk(), 3u) << "the blocks were copied into a content file";
    EXPECT_EQ(store->live_content_ids().size(), 3u);
    EXPECT_EQ(read("big"), bytes);
    OpenBlob blob = store->open_blob(kAcct, "data", "big");
    ASSERT_EQ(blob.parts.size(), 3u);
    EXPECT_EQ(blob.single_fd(), -1);
    // Reads that start inside one part and end in the next, or run past the end.
    for (std::uint64_t offset : {std::uint64_t{0}, kBlock - 10, 2 * kBlock - 1, 3 * kBlock - 5}) {
        std::string got(kBlock + 20, '\0');
        ssize_t n = blob.read(got.data(), got.size(), offset);
        ASSERT_GE(n, 0);
        EXPECT_EQ(got.substr(0, static_cast<size_t>(n)), bytes.substr(offset, got.size())) << offset;
    }
    char past;
    EXPECT_EQ(blob.read(&past, 1, 3 * kBlock), 0);
    auto lists = store->get_block_lists(kAcct, "data", "big");
    ASSERT_EQ(lists.committed.size(), 3u);
    EXPECT_EQ(lists.committed[1].id, id("b00001"));
    EXPECT_TRUE(lists.uncommitted.empty());
}

TEST_F(ComposedBlobTest, ARecommitKeepsTheBlocksItUsesAndRemovesTheOthers) {
    std::string bytes = commit_blocks("big", 3, kBlock);
    OpenBlob before = store->open_blob(kAcct, "data", "big");
    std::string fresh = pattern('z', kBlock);
    stage("big", "b00003", fresh);
    store->put_block_list(kAcct, "data", "big",
                          {{id("b00002"), BlockListType::committed}, {id("b00003"), BlockListType::latest},
                           {id("b00002"), BlockListType::latest}},
                          {}, {}, {});
    std::string third = bytes.substr(2 * kBlock);
    EXPECT_EQ(read("big"), third + fresh + third);
    EXPECT_TRUE(store->get_blob(kAcct, "data", "big").composed);
    EXPECT_EQ(files_on_disk(), 2u) << "b0 and b1 should be gone, b2 and b3 kept";
    EXPECT_EQ(orphans(), 0u);
    EXPECT_EQ(contents(before), bytes) << "a reader of the first version lost its bytes";
}

TEST_F(ComposedBlobTest, SmallOrManyBlocksAreCopiedIntoOneFile) {
    std::string small = commit_blocks("small-blocks", 80, 1024);  // 80 KiB in 1 KiB blocks
    BlobInfo info = store->get_blob(kAcct, "data", "small-blocks");
    EXPECT_FALSE(info.composed);
    EXPECT_FALSE(info.content_id.empty());
    EXPECT_EQ(read("small-blocks"), small);
    std::string many = commit_blocks("many-blocks", kMaxBlobParts + 1, kInlineLimit);
    EXPECT_FALSE(store->get_blob(kAcct, "data", "many-blocks").composed);
    EXPECT_EQ(read("many-blocks"), many);
    EXPECT_EQ(files_on_disk(), 2u);
    EXPECT_EQ(orphans(), 0u);
}

TEST_F(ComposedBlobTest, BlocksOfACopiedBlobMixWithNewOnesByCopying) {
    std::string first = commit_blocks("mixed", 2, kBlock);
    // A committed block of a blob that is one content file is a run of that file.
    store->copy_blob(kAcct, "data", "mixed", kAcct, "data", "mixed", {}, {});
    std::string tail = pattern('q', kBlock);
    stage("mixed", "t0000", tail);
    auto lists = store->get_block_lists(kAcct, "data", "mixed");
    ASSERT_EQ(lists.committed.size(), 2u) << "a copy keeps the committed block list";
    store->put_block_list(kAcct, "data", "mixed",
                          {{id("b00001"), BlockListType::committed}, {id("t0000"), BlockListType::latest}},
                          {}, {}, {});
    EXPECT_EQ(read("mixed"), first.substr(kBlock) + tail);
    EXPECT_EQ(orphans(), 0u);
}

TEST_F(ComposedBlobTest, DeletingTheBlobOrItsContainerRemovesItsParts) {
    commit_blocks("one", 2, kBlock);
    commit_blocks("two", 2, kBlock);
    stage("two", "pend0", pattern('p', kBlock));
    store->delete_blob(kAcct, "data", "one", {});
    EXPECT_EQ(files_on_disk(), 3u);
    store->delete_container(kAcct, "data", {});
    EXPECT_EQ(files_on_disk(), 0u);
}

TEST_F(ComposedBlobTest, CopiesShareThePartsWithinAnAccountAndCopyThemAcross) {
    std::string bytes = commit_blocks("src", 3, kBlock);
    store->copy_blob(kAcct, "data", "dst", kAcct, "data", "src", {}, {});
    EXPECT_TRUE(store->get_blob(kAcct, "data", "dst").composed);
    EXPECT_EQ(store->get_block_lists(kAcct, "data", "dst").committed.size(), 3u);
    store->create_container("other", "box", {}, "");
    store->copy_blob("other", "box", "far", kAcct, "data", "src", {}, {});
    store->delete_blob(kAcct, "data", "src", {});
    EXPECT_EQ(read("dst"), bytes);
    BlobInfo far = store->get_blob("other", "box", "far");
    EXPECT_FALSE(far.composed);
    EXPECT_EQ(contents(store->open_blob("other", "box", "far")), bytes);
    EXPECT_EQ(orphans(), 0u);
    store->delete_blob(kAcct, "data", "dst", {});
    store->delete_blob("other", "box", "far", {});
    EXPECT_EQ(files_on_disk(), 0u);
}

TEST_F(ComposedBlobTest, PartsSurviveReopeningAndTheSweep) {
    std::string bytes = commit_blocks("kept", 2, kBlock);
    store.reset();
    db.reset();
    db = db::Database::open(dir / "state.db");
    migrate_storage_schema(*db);
    store = std::make_unique<BlobStore>(*db, *files);
    EXPECT_EQ(orphans(), 0u);
    EXPECT_EQ(read("kept"), bytes);
}

}  // namespace
}  // namespace bai::storage
