// Blob versions: off by default; with the account's versioning on, every write that replaces a
// blob's content or metadata keeps what it replaced as a version, readable and deletable by its id.
#include <nlohmann/json.hpp>

#include "fake_storage/http/service_properties_xml.h"
#include "tests/fake_storage/blob_store_fixture.h"

namespace bai::storage {
namespace {

using bai::testing::kAcct;

class BlobVersionsTest : public BlobStoreTest {
protected:
    void versioning(bool on) {
        store->service_settings().update(kAcct, "blob", default_blob_service_properties(), [&](nlohmann::json p) {
            p["IsVersioningEnabled"] = on;
            return p;
        });
    }
    std::vector<BlobInfo> listed(bool versions, bool snapshots = false) {
        ListOptions o;
        o.versions = versions;
        o.snapshots = snapshots;
        std::vector<BlobInfo> out;
        for (const BlobListEntry& e : store->list_blobs(kAcct, "data", o).entries) out.push_back(e.blob);
        return out;
    }
    std::string read_version(const std::string& name, const std::string& id) {
        return contents(store->open_blob(kAcct, "data", name, version_key(id)));
    }
};

TEST_F(BlobVersionsTest, OffByDefaultNoVersionIds) {
    EXPECT_FALSE(store->versioning_enabled(kAcct));
    EXPECT_TRUE(put("a", "one").version_id.empty());
    put("a", "two");
    EXPECT_EQ(listed(true).size(), 1u);
    EXPECT_TRUE(store->get_blob(kAcct, "data", "a").version_id.empty());
}

TEST_F(BlobVersionsTest, EachWriteKeepsThePreviousStateAsAVersion) {
    versioning(true);
    const BlobInfo first = put("a", "one");
    const BlobInfo second = put("a", "two");
    ASSERT_FALSE(first.version_id.empty());
    ASSERT_FALSE(second.version_id.empty());
    EXPECT_LT(first.version_id, second.version_id);
    EXPECT_EQ(read("a"), "two");
    EXPECT_EQ(read_version("a", first.version_id), "one");
    EXPECT_EQ(read_version("a", second.version_id), "two");  // the current version's id reads the blob
    const BlobInfo current = store->get_blob(kAcct, "data", "a");
    EXPECT_TRUE(current.is_current_version());
    EXPECT_EQ(current.version_id, second.version_id);
    EXPECT_FALSE(store->get_blob(kAcct, "data", "a", version_key(first.version_id)).is_current_version());

    // Listings: the blob alone, or its versions (oldest first) with it.
    ASSERT_EQ(listed(false).size(), 1u);
    std::vector<BlobInfo> all = listed(true);
    ASSERT_EQ(all.size(), 2u);
    EXPECT_EQ(all[0].version_id, first.version_id);
    EXPECT_FALSE(all[0].is_current_version());
    EXPECT_TRUE(all[1].is_current_version());
    EXPECT_TRUE(listed(false, true).size() == 1u);  // include=snapshots does not list versions
}

TEST_F(BlobVersionsTest, MetadataMakesAVersionPropertiesDoNot) {
    versioning(true);
    const BlobInfo first = put("a", "body");
    const BlobInfo meta = store->set_blob_metadata(kAcct, "data", "a", {{"k", "v"}}, {});
    EXPECT_NE(meta.version_id, first.version_id);
    EXPECT_TRUE(store->get_blob(kAcct, "data", "a", version_key(first.version_id)).metadata.empty());
    EXPECT_EQ(read_version("a", first.version_id), "body");
    ContentSettings content;
    content.content_type = "text/plain";
    const BlobInfo props = store->set_blob_content(kAcct, "data", "a", content, {});
    EXPECT_EQ(props.version_id, meta.version_id);
    EXPECT_EQ(listed(true).size(), 2u);
}

TEST_F(BlobVersionsTest, LargeBodiesKeepTheirFiles) {
    versioning(true);
    const std::string big(200 * 1024, 'x');
    const BlobInfo first = put("a", big);
    put("a", std::string(200 * 1024, 'y'));
    store->set_blob_metadata(kAcct, "data", "a", {{"k", "v"}}, {});
    EXPECT_EQ(read_version("a", first.version_id), big);
    EXPECT_EQ(read("a"), std::string(200 * 1024, 'y'));
    store->delete_blob(kAcct, "data", "a", {}, DeleteSnapshots::none, version_key(first.version_id));
    EXPECT_EQ(read("a"), std::string(200 * 1024, 'y'));
    EXPECT_EQ(listed(true).size(), 2u);  // the metadata's version and the current one
}

TEST_F(BlobVersionsTest, DeletingTheBlobLeavesItsVersions) {
    versioning(true);
    const BlobInfo first = put("a", "one");
    const BlobInfo second = put("a", "two");
    store->delete_blob(kAcct, "data", "a", {});
    expect_error([&] { store->get_blob(kAcct, "data", "a"); }, "BlobNotFound");
    EXPECT_TRUE(listed(false).empty());
    std::vector<BlobInfo> all = listed(true);
    ASSERT_EQ(all.size(), 2u);
    EXPECT_FALSE(all[1].is_current_version());
    EXPECT_EQ(read_version("a", second.version_id), "two");
    // A version deleted is gone; the others stay.
    store->delete_blob(kAcct, "data", "a", {}, DeleteSnapshots::none, version_key(first.version_id));
    expect_error([&] { store->get_blob(kAcct, "data", "a", version_key(first.version_id)); }, "BlobNotFound");
    EXPECT_EQ(listed(true).size(), 1u);
}

TEST_F(BlobVersionsTest, SnapshotsAreNotVersionsAndMakeANewCurrentVersion) {
    versioning(true);
    const BlobInfo first = put("a", "one");
    const BlobInfo snapshot = store->snapshot_blob(kAcct, "data", "a", std::nullopt, {});
    EXPECT_FALSE(snapshot.version_id.empty());
    EXPECT_NE(snapshot.version_id, first.version_id);
    EXPECT_EQ(store->get_blob(kAcct, "data", "a").version_id, snapshot.version_id);
    EXPECT_TRUE(store->get_blob(kAcct, "data", "a", snapshot.snapshot).version_id.empty());
    EXPECT_EQ(listed(false, true).size(), 2u);  // the snapshot and the blob
    EXPECT_EQ(listed(true, false).size(), 2u);  // the earlier version and the blob
    // A blob with snapshots still needs x-ms-delete-snapshots; its versions do not count.
    expect_error([&] { store->delete_blob(kAcct, "data", "a", {}); }, "SnapshotsPresent");
    store->delete_blob(kAcct, "data", "a", {}, DeleteSnapshots::include);
    EXPECT_EQ(listed(true).size(), 2u);
}

TEST_F(BlobVersionsTest, AVersionThatDoesNotExistIsBlobNotFound) {
    versioning(true);
    put("a", "one");
    expect_error([&] { store->get_blob(kAcct, "data", "a", version_key("2001-01-01T00:00:00.0000000Z")); },
                 "BlobNotFound");
    expect_error(
        [&] { store->delete_blob(kAcct, "data", "a", {}, DeleteSnapshots::none, version_key("2001-01-01T00:00:00.0000000Z")); },
        "BlobNotFound");
}

TEST_F(BlobVersionsTest, TurnedOffTheVersionsStayAndNewWritesHaveNone) {
    versioning(true);
    const BlobInfo first = put("a", "one");
    versioning(false);
    const BlobInfo second = put("a", "two");
    EXPECT_TRUE(second.version_id.empty());
    EXPECT_EQ(read_version("a", first.version_id), "one");
    put("a", "three");
    EXPECT_EQ(listed(true).size(), 2u);  // the versioned "one" and the blob
}

TEST_F(BlobVersionsTest, TagsAndTiersOfAVersion) {
    versioning(true);
    const BlobInfo first = put("a", "one");
    put("a", "two");
    store->set_blob_tags(kAcct, "data", "a", version_key(first.version_id), {{"k", "v"}}, {});
    EXPECT_EQ(store->get_blob(kAcct, "data", "a", version_key(first.version_id)).tags.size(), 1u);
    EXPECT_TRUE(store->get_blob(kAcct, "data", "a").tags.empty());
    store->set_blob_tier(kAcct, "data", "a", version_key(first.version_id), "Cool", {});
    EXPECT_EQ(store->get_blob(kAcct, "data", "a", version_key(first.version_id)).tier, "Cool");
    EXPECT_EQ(store->get_blob(kAcct, "data", "a").tier, "");
}

// A block list that commits again blocks of the blob it replaces (composed of its block files):
// the version and the new blob each keep the files, whichever goes first.
TEST_F(BlobVersionsTest, BlocksCommittedAgainStayWithBothVersions) {
    versioning(true);
    const std::string a(100 * 1024, 'a'), b(100 * 1024, 'b');
    stage("x", "blk1", a);
    stage("x", "blk2", b);
    const std::string id1 = crypto::base64_encode("blk1"), id2 = crypto::base64_encode("blk2");
    const BlobInfo first = store->put_block_list(kAcct, "data", "x", {{id1, BlockListType::latest}, {id2, BlockListType::latest}},
                                                 {}, {}, {});
    const BlobInfo second = store->put_block_list(kAcct, "data", "x", {{id2, BlockListType::committed}}, {}, {}, {});
    EXPECT_EQ(read("x"), b);
    EXPECT_EQ(read_version("x", first.version_id), a + b);
    store->delete_blob(kAcct, "data", "x", {}, DeleteSnapshots::none, version_key(first.version_id));
    EXPECT_EQ(read("x"), b);
    EXPECT_EQ(read_version("x", second.version_id), b);
}

TEST_F(BlobVersionsTest, DeletingTheContainerTakesTheVersions) {
    versioning(true);
    put("a", std::string(100 * 1024, 'x'));
    put("a", "two");
    store->delete_container(kAcct, "data", {});
    store->create_container(kAcct, "data", {}, "");
    EXPECT_TRUE(listed(true).empty());
}

}  // namespace
}  // namespace bai::storage
