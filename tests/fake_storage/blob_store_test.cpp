#include "fake_storage/engine/blob_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "common/crypto/base64.h"
#include "fake_storage/engine/storage_error.h"
#include "fake_storage/engine/storage_schema.h"
#include "tests/common/dev_account.h"
#include "tests/common/test_dir.h"
#include "tests/fake_storage/blob_store_fixture.h"

namespace bai::storage {
namespace {

using bai::testing::kAcct;

TEST_F(BlobStoreTest, ContainersAreCreatedOnceAndDeletedWithTheirBlobs) {
    EXPECT_EQ(expect_error([&] { store->create_container(kAcct, "data", {}, ""); },
                           "ContainerAlreadyExists"),
              409);
    put("a", "hello");
    store->delete_container(kAcct, "data", {});
    EXPECT_EQ(expect_error([&] { store->get_container(kAcct, "data"); }, "ContainerNotFound"), 404);
    store->create_container(kAcct, "data", {}, "");
    expect_error([&] { store->get_blob(kAcct, "data", "a"); }, "BlobNotFound");
    EXPECT_EQ(files->sweep({}), 0u) << "deleting the container left content files behind";
}

// The cloud's marker names the next page's first container as /ACCOUNT/NAME.
TEST_F(BlobStoreTest, ContainerPagesContinueAtTheContainerTheMarkerNames) {
    for (const char* name : {"p-cc", "p-aa", "p-bb"}) store->create_container(kAcct, name, {}, "");
    ListOptions o;
    o.prefix = "p-";
    o.max_results = 2;
    ContainerListPage first = store->list_containers(kAcct, o);
    ASSERT_EQ(first.containers.size(), 2u);
    EXPECT_EQ(first.containers[1].name, "p-bb");
    EXPECT_EQ(first.next_marker, "/" + std::string(kAcct) + "/p-cc");
    o.marker = first.next_marker;
    ContainerListPage second = store->list_containers(kAcct, o);
    ASSERT_EQ(second.containers.size(), 1u);
    EXPECT_EQ(second.containers[0].name, "p-cc");
    EXPECT_TRUE(second.next_marker.empty());
    // A container's name as the marker (as code written for Azurite passes it): what follows it.
    o.marker = "p-aa";
    o.max_results = 5000;
    ContainerListPage after = store->list_containers(kAcct, o);
    ASSERT_EQ(after.containers.size(), 2u);
    EXPECT_EQ(after.containers[0].name, "p-bb");
}

TEST_F(BlobStoreTest, PutBlobReplacesAtomicallyAndKeepsCreationTime) {
    BlobInfo first = put("x/y.txt", "one");
    EXPECT_EQ(read("x/y.txt"), "one");
    OpenBlob reader = store->open_blob(kAcct, "data", "x/y.txt");
    BlobInfo second = put("x/y.txt", "second");
    EXPECT_NE(first.etag, second.etag);
    EXPECT_EQ(first.created, second.created);
    EXPECT_EQ(read("x/y.txt"), "second");
    // A reader that opened the old version still reads it whole.
    EXPECT_EQ(contents(reader), "one");
}

TEST_F(BlobStoreTest, LargeBodiesLiveInFilesAndSmallOnesInline) {
    std::string large(kInlineLimit + 1, 'L');
    BlobInfo big = put("large", large);
    BlobInfo small = put("small", "tiny");
    EXPECT_FALSE(big.content_id.empty());
    EXPECT_TRUE(small.content_id.empty());
    OpenBlob reader = store->open_blob(kAcct, "data", "large");
    EXPECT_GE(reader.single_fd(), 0);
    put("large", "now small");  // replaced by an inline body; the old file goes away
    EXPECT_EQ(contents(reader), large);
    EXPECT_EQ(read("large"), "now small");
    auto ids = store->live_content_ids();
    EXPECT_TRUE(ids.empty());
    EXPECT_EQ(files->sweep({}), 0u) << "the replaced body's file was left behind";
}

TEST_F(BlobStoreTest, BlockListsMixInlineAndFileContent) {
    std::string large(kInlineLimit, 'x');
    stage("mix", "b1", "head-");
    stage("mix", "b2", large);
    std::string b1 = crypto::base64_encode("b1"), b2 = crypto::base64_encode("b2");
    store->put_block_list(kAcct, "data", "mix", {{b1, BlockListType::latest}}, {}, {}, {});
    EXPECT_EQ(read("mix"), "head-");  // small: inline
    stage("mix", "b2", large);
    store->put_block_list(kAcct, "data", "mix",
                          {{b1, BlockListType::committed}, {b2, BlockListType::latest}}, {}, {}, {});
    EXPECT_EQ(read("mix"), "head-" + large);  // committed inline block + a file block: a file
    store->put_block_list(kAcct, "data", "mix", {{b1, BlockListType::committed}}, {}, {}, {});
    EXPECT_EQ(read("mix"), "head-");
}

TEST_F(BlobStoreTest, ConditionalWrites) {
    BlobInfo b = put("c", "1");
    Conditions none_match_any;
    none_match_any.if_none_match = "*";
    EXPECT_EQ(expect_error([&] { put("c", "2", none_match_any); }, "BlobAlreadyExists"), 409);
    Conditions wrong_match;
    wrong_match.if_match = "\"0x1\"";
    EXPECT_EQ(expect_error([&] { put("c", "2", wrong_match); }, "ConditionNotMet"), 412);
    EXPECT_EQ(read("c"), "1");
    Conditions right_match;
    right_match.if_match = b.etag;
    put("c", "3", right_match);
    EXPECT_EQ(read("c"), "3");
    put("new", "n", none_match_any);
    EXPECT_EQ(expect_error([&] { put("missing", "m", right_match); }, "ConditionNotMet"), 412);
}

TEST_F(BlobStoreTest, BlockListsCommitInTheGivenOrder) {
    stage("big", "b1", "AAA");
    stage("big", "b2", "BB");
    stage("big", "b3", "C");
    auto lists = store->get_block_lists(kAcct, "data", "big");
    EXPECT_FALSE(lists.blob.has_value());
    EXPECT_EQ(lists.uncommitted.size(), 3u);
    expect_error([&] { store->get_blob(kAcct, "data", "big"); }, "BlobNotFound");

    std::string b1 = crypto::base64_encode("b1"), b2 = crypto::base64_encode("b2"),
                b3 = crypto::base64_encode("b3");
    store->put_block_list(kAcct, "data", "big",
                          {{b3, BlockListType::latest}, {b1, BlockListType::uncommitted},
                           {b2, BlockListType::latest}},
                          {}, {}, {});
    EXPECT_EQ(read("big"), "CAAABB");
    lists = store->get_block_lists(kAcct, "data", "big");
    ASSERT_EQ(lists.committed.size(), 3u);
    EXPECT_EQ(lists.committed[0].id, b3);
    EXPECT_EQ(lists.committed[2].size, 2u);
    EXPECT_TRUE(lists.uncommitted.empty());

    // Recommit a subset of committed blocks plus a new one.
    stage("big", "b4", "DDDD");
    std::string b4 = crypto::base64_encode("b4");
    store->put_block_list(kAcct, "data", "big",
                          {{b2, BlockListType::committed}, {b4, BlockListType::latest}}, {}, {}, {});
    EXPECT_EQ(read("big"), "BBDDDD");
    EXPECT_EQ(expect_error([&] {
                  store->put_block_list(kAcct, "data", "big", {{b1, BlockListType::committed}},
                                        {}, {}, {});
              },
                           "InvalidBlockList"),
              400);
    EXPECT_EQ(read("big"), "BBDDDD");
}

TEST_F(BlobStoreTest, BadBlockIdsAreRefused) {
    auto w = bytes("x");
    expect_error([&] { store->put_block(kAcct, "data", "b", "not base64!", *w); },
                 "InvalidQueryParameterValue");
    stage("b", "aaaa", "1");
    auto w2 = bytes("x");
    expect_error([&] { store->put_block(kAcct, "data", "b", crypto::base64_encode("a"), *w2); },
                 "InvalidBlobOrBlock");
    auto w3 = bytes("x");
    expect_error([&] { store->put_block(kAcct, "nocontainer", "b", crypto::base64_encode("a"), *w3); },
                 "ContainerNotFound");
}

TEST_F(BlobStoreTest, ListingWithPrefixDelimiterAndMarkers) {
    for (auto name : {"a.txt", "dir/1", "dir/2", "dir/sub/3", "dis", "e"}) put(name, name);
    ListOptions flat;
    flat.max_results = 2;
    std::vector<std::string> seen;
    do {
        auto page = store->list_blobs(kAcct, "data", flat);
        for (auto& e : page.entries) seen.push_back(e.blob.name);
        flat.marker = page.next_marker;
    } while (!flat.marker.empty());
    EXPECT_EQ(seen, (std::vector<std::string>{"a.txt", "dir/1", "dir/2", "dir/sub/3", "dis", "e"}));

    ListOptions tree;
    tree.delimiter = "/";
    auto top = store->list_blobs(kAcct, "data", tree);
    std::vector<std::string> names;
    for (auto& e : top.entries) names.push_back(e.is_prefix ? "P:" + e.prefix : e.blob.name);
    EXPECT_EQ(names, (std::vector<std::string>{"a.txt", "P:dir/", "dis", "e"}));

    tree.prefix = "dir/";
    tree.max_results = 2;
    auto page1 = store->list_blobs(kAcct, "data", tree);
    ASSERT_EQ(page1.entries.size(), 2u);
    EXPECT_EQ(page1.entries[1].blob.name, "dir/2");
    EXPECT_EQ(page1.next_marker, "dir/2");  // the last entry listed (Azurite's markers)
    tree.marker = page1.next_marker;
    auto page2 = store->list_blobs(kAcct, "data", tree);
    ASSERT_EQ(page2.entries.size(), 1u);
    EXPECT_TRUE(page2.entries[0].is_prefix);
    EXPECT_EQ(page2.entries[0].prefix, "dir/sub/");
    EXPECT_TRUE(page2.next_marker.empty());
    // A prefix as the marker: the page starts after every name it groups.
    tree.prefix.clear();
    tree.marker = "dir/";
    auto after_group = store->list_blobs(kAcct, "data", tree);
    ASSERT_FALSE(after_group.entries.empty());
    EXPECT_EQ(after_group.entries[0].blob.name, "dis");
}

TEST_F(BlobStoreTest, CopySharesBytesAndSurvivesSourceDeletion) {
    put("src", "payload");
    store->copy_blob(kAcct, "data", "dst", kAcct, "data", "src", {}, {});
    store->delete_blob(kAcct, "data", "src", {});
    EXPECT_EQ(read("dst"), "payload");
    expect_error([&] { store->copy_blob(kAcct, "data", "d2", kAcct, "data", "src", {}, {}); },
                 "CannotVerifyCopySource");
}

TEST_F(BlobStoreTest, PropertiesAndMetadataChangeTheEtag) {
    BlobInfo b = put("p", "x");
    ContentSettings c;
    c.content_type = "text/plain";
    BlobInfo after = store->set_blob_content(kAcct, "data", "p", c, {});
    EXPECT_NE(after.etag, b.etag);
    EXPECT_EQ(store->get_blob(kAcct, "data", "p").content.content_type, "text/plain");
    store->set_blob_metadata(kAcct, "data", "p", {{"Owner", "me"}}, {});
    auto meta = store->get_blob(kAcct, "data", "p").metadata;
    EXPECT_EQ(meta.at("owner"), "me");  // names compare case-insensitively
    EXPECT_EQ(meta.begin()->first, "Owner");
}

TEST_F(BlobStoreTest, SweepRemovesOnlyUnreferencedContent) {
    put("keep", "k");
    stage("staged", "s1", "s");
    auto orphan = files->begin(false);
    orphan->append("orphan");
    files->commit(*orphan, kAcct, ContentKind::blob);
    auto ids = store->live_content_ids();
    EXPECT_EQ(files->sweep({ids.begin(), ids.end()}), 1u);
    EXPECT_EQ(read("keep"), "k");
    EXPECT_EQ(store->get_block_lists(kAcct, "data", "staged").uncommitted.size(), 1u);
}

TEST_F(BlobStoreTest, EverythingSurvivesReopening) {
    put("persist", "bytes");
    store.reset();
    db.reset();
    db = db::Database::open(dir / "state.db");
    store = std::make_unique<BlobStore>(*db, *files);
    EXPECT_EQ(read("persist"), "bytes");
}

// open_blob answers from what it read before until something changes; every kind of change is
// seen by the next read (each read here comes after a read of the same blob).
TEST_F(BlobStoreTest, AReadAfterAnyChangeSeesIt) {
    put("c", "first");
    EXPECT_EQ(read("c"), "first");
    put("c", "second");
    EXPECT_EQ(read("c"), "second");
    store->set_blob_metadata(kAcct, "data", "c", {{"k", "v"}}, {});
    EXPECT_EQ(store->open_blob(kAcct, "data", "c").info.metadata.at("k"), "v");
    ContentSettings settings;
    settings.content_type = "text/x-cached";
    store->set_blob_content(kAcct, "data", "c", settings, {});
    EXPECT_EQ(store->open_blob(kAcct, "data", "c").info.content.content_type, "text/x-cached");
    stage("c", "b1", "from");
    stage("c", "b2", "blocks");
    store->put_block_list(kAcct, "data", "c", {{crypto::base64_encode("b1"), BlockListType::latest},
                                               {crypto::base64_encode("b2"), BlockListType::latest}}, {}, {}, {});
    EXPECT_EQ(read("c"), "fromblocks");
    put("other", "copied");
    EXPECT_EQ(read("other"), "copied");
    store->copy_blob(kAcct, "data", "c", kAcct, "data", "other", {}, {});
    EXPECT_EQ(read("c"), "copied");
    store->delete_blob(kAcct, "data", "c", {});
    expect_error([&] { read("c"); }, "BlobNotFound");
    store->delete_container(kAcct, "data", {});
    expect_error([&] { read("other"); }, "ContainerNotFound");
    store->create_container(kAcct, "data", {}, "");
    expect_error([&] { read("other"); }, "BlobNotFound");
}

}  // namespace
}  // namespace bai::storage

namespace bai::storage {
namespace {

size_t files_under(const std::filesystem::path& dir) {
    size_t n = 0;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) n += entry.is_regular_file();
    return n;
}

TEST_F(BlobStoreTest, StagedBlocksGoAWeekAfterTheirBlobsLastPutBlock) {
    time::TimePoint now = time::from_ticks(0) + std::chrono::hours(24 * 365 * 40);
    store->set_clock([&] { return now; });
    const std::string big(100000, 'b');  // in a file of its own
    stage("abandoned", "one", big);
    stage("abandoned", "two", big);
    put("kept", "committed bytes");
    now += std::chrono::hours(24 * 6);
    stage("touched", "one", big);
    stage("abandoned-later", "one", big);
    const auto blocks_dir = dir / "storage" / bai::testing::kAcct / "blocks";
    const size_t before = files_under(blocks_dir);

    std::vector<StagedBlocks> usage = store->staged_blocks_by_account();
    ASSERT_EQ(usage.size(), 1u);
    EXPECT_EQ(usage[0].account, bai::testing::kAcct);
    EXPECT_EQ(usage[0].blobs, 3u);
    EXPECT_EQ(usage[0].blocks, 4u);
    EXPECT_EQ(usage[0].bytes, 4 * big.size());

    // Six days after the first blocks: nothing is a week old.
    EXPECT_EQ(store->discard_staged_before(now - BlobStore::kStagedBlockLifetime).blocks, 0u);
    // Eight days after the first ones, two after the others: only "abandoned" goes, files included.
    now += std::chrono::hours(24 * 2);
    StagedBlocks dropped = store->discard_staged_before(now - BlobStore::kStagedBlockLifetime);
    EXPECT_EQ(dropped.blobs, 1u);
    EXPECT_EQ(dropped.blocks, 2u);
    EXPECT_EQ(dropped.bytes, 2 * big.size());
    EXPECT_EQ(files_under(blocks_dir), before - 2);
    expect_error([&] { store->get_block_lists(bai::testing::kAcct, "data", "abandoned"); }, "BlobNotFound");
    EXPECT_EQ(store->get_block_lists(bai::testing::kAcct, "data", "touched").uncommitted.size(), 1u);
    EXPECT_EQ(read("kept"), "committed bytes");
    // A Put Block List that names the dropped blocks finds none.
    expect_error([&] {
        store->put_block_list(bai::testing::kAcct, "data", "abandoned", {{crypto::base64_encode("one"), BlockListType::latest}},
                              {}, {}, {});
    }, "InvalidBlockList");
    EXPECT_EQ(store->staged_blocks_by_account()[0].blobs, 2u);
}

}  // namespace
}  // namespace bai::storage
