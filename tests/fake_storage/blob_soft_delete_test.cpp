// Blob soft delete: off by default; with the account's delete retention policy on, Delete Blob
// keeps what it deletes (listed only when asked), and Undelete Blob brings it back.
#include <nlohmann/json.hpp>

#include "fake_storage/engine/conditions.h"
#include "fake_storage/http/service_properties_xml.h"
#include "tests/fake_storage/blob_store_fixture.h"
#include "tests/fake_storage/error_code.h"

namespace bai::storage {
namespace {

using bai::testing::kAcct;
using testing::code_of;

class BlobSoftDeleteTest : public BlobStoreTest {
protected:
    void retain(int days) {
        store->service_settings().update(kAcct, "blob", default_blob_service_properties(), [&](nlohmann::json p) {
            p["DeleteRetentionPolicy"] = {{"Enabled", true}, {"Days", days}};
            return p;
        });
    }
    std::vector<BlobInfo> listed(bool deleted, bool snapshots) {
        ListOptions o;
        o.deleted = deleted;
        o.snapshots = snapshots;
        std::vector<BlobInfo> out;
        for (const BlobListEntry& e : store->list_blobs(kAcct, "data", o).entries) out.push_back(e.blob);
        return out;
    }
};

TEST_F(BlobSoftDeleteTest, OffByDefaultADeleteIsForGood) {
    EXPECT_EQ(store->delete_retention_days(kAcct), 0);
    put("a", "one");
    store->delete_blob(kAcct, "data", "a", {});
    EXPECT_TRUE(listed(true, true).empty());
    EXPECT_EQ(code_of([&] { store->undelete_blob(kAcct, "data", "a"); }), "404 BlobNotFound");
}

TEST_F(BlobSoftDeleteTest, ADeletedBlobAndItsSnapshotsComeBack) {
    retain(3);
    EXPECT_EQ(store->delete_retention_days(kAcct), 3);
    put("a", "one");
    const BlobInfo snapshot = store->snapshot_blob(kAcct, "data", "a", {}, {});
    store->delete_blob(kAcct, "data", "a", {}, DeleteSnapshots::include);
    EXPECT_EQ(code_of([&] { read("a"); }), "404 BlobNotFound");
    EXPECT_TRUE(listed(false, true).empty());
    // Listed when asked: the blob alone, or with its snapshot before it.
    std::vector<BlobInfo> deleted = listed(true, false);
    ASSERT_EQ(deleted.size(), 1u);
    EXPECT_TRUE(deleted[0].is_deleted());
    EXPECT_FALSE(deleted[0].is_snapshot());
    EXPECT_EQ(deleted[0].key_before_deletion(), "");
    EXPECT_EQ(deleted[0].deleted_time().size(), 28u);
    deleted = listed(true, true);
    ASSERT_EQ(deleted.size(), 2u);
    EXPECT_EQ(deleted[0].key_before_deletion(), snapshot.snapshot);
    store->undelete_blob(kAcct, "data", "a");
    EXPECT_EQ(read("a"), "one");
    EXPECT_EQ(contents(store->open_blob(kAcct, "data", "a", snapshot.snapshot)), "one");
    EXPECT_EQ(listed(true, true).size(), 2u);  // nothing deleted is left
}

TEST_F(BlobSoftDeleteTest, ABlobOfTheNameKeepsItsPlace) {
    retain(1);
    put("a", "old");
    store->delete_blob(kAcct, "data", "a", {});
    put("a", "new");
    store->undelete_blob(kAcct, "data", "a");
    EXPECT_EQ(read("a"), "new");
    const std::vector<BlobInfo> rows = listed(true, false);
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_FALSE(rows[0].is_deleted());
    EXPECT_TRUE(rows[1].is_deleted());  // after the live blob of its name
    // A deleted snapshot alone: the blob still needs no word about it to go.
    const BlobInfo snapshot = store->snapshot_blob(kAcct, "data", "a", {}, {});
    store->delete_blob(kAcct, "data", "a", {}, DeleteSnapshots::none, snapshot.snapshot);
    EXPECT_EQ(code_of([&] { store->open_blob(kAcct, "data", "a", snapshot.snapshot); }), "404 BlobNotFound");
    store->delete_blob(kAcct, "data", "a", {});
}

}  // namespace
}  // namespace bai::storage
