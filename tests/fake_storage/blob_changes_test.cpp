// What BlobStore tells its mounts (changes()), and the brief listing they read.
#include <mutex>
#include <utility>
#include <vector>

#include "tests/fake_storage/blob_store_fixture.h"

namespace bai::storage {
namespace {

using bai::testing::kAcct;

class BlobChangesTest : public BlobStoreTest {
protected:
    void SetUp() override {
        BlobStoreTest::SetUp();
        subscription = store->changes().subscribe([this](const StoreChange& c) {
            std::lock_guard guard(mutex);
            seen.push_back(c.account + "/" + c.volume + "/" + c.path + (c.origin ? " (a mount)" : ""));
        });
    }
    void TearDown() override { store->changes().unsubscribe(subscription); }
    std::vector<std::string> taken() {
        std::lock_guard guard(mutex);
        return std::exchange(seen, {});
    }

    std::uint64_t subscription = 0;
    std::mutex mutex;
    std::vector<std::string> seen;
};

TEST_F(BlobChangesTest, WhatAMountShowsIsPublishedOnceTheCallReturns) {
    const std::string blob = std::string(kAcct) + "/data/a/b.txt";
    put("a/b.txt", "one");
    EXPECT_EQ(taken(), std::vector<std::string>{blob});
    store->set_blob_metadata(kAcct, "data", "a/b.txt", {{"k", "v"}}, {});
    ContentSettings content;
    content.content_type = "text/plain";
    store->set_blob_content(kAcct, "data", "a/b.txt", content, {});
    store->copy_blob(kAcct, "data", "c.txt", kAcct, "data", "a/b.txt", {}, {});
    stage("d.txt", "0001", "block");
    EXPECT_EQ(taken(), (std::vector<std::string>{blob, blob, std::string(kAcct) + "/data/c.txt"}));  // not the staged block
    store->put_block_list(kAcct, "data", "d.txt", {{crypto::base64_encode("0001"), BlockListType::uncommitted}}, {}, {}, {});
    store->delete_blob(kAcct, "data", "c.txt", {});
    EXPECT_EQ(taken(), (std::vector<std::string>{std::string(kAcct) + "/data/d.txt", std::string(kAcct) + "/data/c.txt"}));

    // A lease and tags change nothing a mount shows; a failed call changed nothing.
    LeaseRequest lease;
    lease.action = LeaseAction::acquire;
    lease.duration = -1;
    store->set_blob_tags(kAcct, "data", "a/b.txt", "", {{"t", "1"}}, {});
    store->lease_blob(kAcct, "data", "a/b.txt", lease, {});
    expect_error([&] { put("a/b.txt", "two"); }, "LeaseIdMissing");
    EXPECT_EQ(taken(), std::vector<std::string>{});

    // A container: the whole of it ("").
    store->create_container(kAcct, "other", {}, "");
    store->delete_container(kAcct, "other", {});
    EXPECT_EQ(taken(), (std::vector<std::string>{std::string(kAcct) + "/other/", std::string(kAcct) + "/other/"}));

    // A mount's own request says so.
    {
        StoreChanges::OriginScope origin(this);
        put("mine.txt", "");
    }
    put("theirs.txt", "");
    EXPECT_EQ(taken(), (std::vector<std::string>{std::string(kAcct) + "/data/mine.txt (a mount)",
                                                 std::string(kAcct) + "/data/theirs.txt"}));
}

TEST_F(BlobChangesTest, ABriefListingHasNamesSizesTimesAndTheMarkersMetadata) {
    put("f.txt", "bytes");
    auto w = bytes("");
    store->put_blob(kAcct, "data", "dir", *w, {}, {{"hdi_isfolder", "true"}}, {});
    auto x = bytes("xyz");
    store->put_blob(kAcct, "data", "g.txt", *x, {}, {{"kept", "no"}}, {});
    put("sub/inner.txt", "i");
    ListOptions brief;
    brief.delimiter = "/";
    brief.brief = true;
    ListOptions full = brief;
    full.brief = false;
    BlobListPage a = store->list_blobs(kAcct, "data", brief);
    BlobListPage b = store->list_blobs(kAcct, "data", full);
    ASSERT_EQ(a.entries.size(), 4u);
    ASSERT_EQ(b.entries.size(), 4u);
    for (size_t i = 0; i < a.entries.size(); ++i) {
        EXPECT_EQ(a.entries[i].is_prefix, b.entries[i].is_prefix);
        EXPECT_EQ(a.entries[i].prefix, b.entries[i].prefix);
        EXPECT_EQ(a.entries[i].blob.name, b.entries[i].blob.name);
        EXPECT_EQ(a.entries[i].blob.size, b.entries[i].blob.size);
        EXPECT_EQ(a.entries[i].blob.last_modified, b.entries[i].blob.last_modified);
        EXPECT_EQ(a.entries[i].blob.created, b.entries[i].blob.created);
    }
    EXPECT_EQ(a.entries[0].blob.name, "dir");
    EXPECT_EQ(a.entries[0].blob.metadata.at("hdi_isfolder"), "true");
    EXPECT_EQ(a.entries[2].blob.name, "g.txt");
    EXPECT_TRUE(a.entries[2].blob.metadata.empty());  // not a marker: not read
    EXPECT_TRUE(a.entries[2].blob.etag.empty());
    EXPECT_FALSE(b.entries[2].blob.etag.empty());
    EXPECT_TRUE(a.entries[3].is_prefix);
}

}  // namespace
}  // namespace bai::storage
