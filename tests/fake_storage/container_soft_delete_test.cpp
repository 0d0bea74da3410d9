// Container soft delete in the BlobStore: off by default; with the account's container retention
// policy on, Delete Container keeps the container and its blobs out of sight under a version,
// listed when asked, being deleted for 30 s (no container of its name made meanwhile), restored
// whole (under its name or another), refused restores changing nothing, and purged when its days
// are over.
#include <nlohmann/json.hpp>

#include "fake_storage/blob/blob_xml.h"
#include "fake_storage/blob/copy_source.h"
#include "fake_storage/engine/share_snapshot_names.h"
#include "fake_storage/http/service_properties_xml.h"
#include "tests/fake_storage/blob_store_fixture.h"
#include "tests/fake_storage/error_code.h"

namespace bai::storage {
namespace {

using bai::testing::kAcct;
using testing::code_of;

class ContainerSoftDeleteTest : public BlobStoreTest {
protected:
    void SetUp() override {
        BlobStoreTest::SetUp();
        store->set_clock([this] { return now; });
    }
    void retain(int days) {
        store->service_settings().update(kAcct, "blob", default_blob_service_properties(), [&](nlohmann::json p) {
            p["ContainerDeleteRetentionPolicy"] = {{"Enabled", true}, {"Days", days}};
            return p;
        });
    }
    std::vector<ContainerInfo> listed(bool deleted) {
        ListOptions o;
        o.deleted = deleted;
        return store->list_containers(kAcct, o).containers;
    }
    std::vector<ContainerInfo> deleted_ones() {
        std::vector<ContainerInfo> out;
        for (ContainerInfo& c : listed(true)) {
            if (!c.deleted_version.empty()) out.push_back(std::move(c));
        }
        return out;
    }
    ContainerInfo restore(const std::string& as, const std::string& name, const std::string& version) {
        return store->restore_container(kAcct, as, name, version, now - std::chrono::hours(24 * 7));
    }
    time::TimePoint now = time::now();
};

TEST_F(ContainerSoftDeleteTest, OffByDefaultADeleteIsForGood) {
    EXPECT_FALSE(store->container_soft_delete_on(kAcct));
    put("a", "one");
    store->delete_container(kAcct, "data", {});
    EXPECT_TRUE(listed(true).empty());
    // Made again at once (no deletion in the background to wait for), empty.
    store->create_container(kAcct, "data", {}, "");
    EXPECT_EQ(code_of([&] { read("a"); }), "404 BlobNotFound");
}

TEST_F(ContainerSoftDeleteTest, ADeletedContainerIsKeptOutOfSightAndComesBackWhole) {
    retain(5);
    EXPECT_TRUE(store->container_soft_delete_on(kAcct));
    EXPECT_EQ(store->container_retention_days(kAcct), 5);
    store->set_container_metadata(kAcct, "data", {{"k", "v"}}, {});
    put("a", "one");
    put("dir/b", std::string(200000, 'b'));  // a content file
    const ContainerInfo before = store->get_container(kAcct, "data");
    store->delete_container(kAcct, "data", {});

    EXPECT_EQ(code_of([&] { store->get_container(kAcct, "data"); }), "404 ContainerNotFound");
    EXPECT_EQ(code_of([&] { read("a"); }), "404 ContainerNotFound");
    EXPECT_TRUE(listed(false).empty());
    std::vector<ContainerInfo> deleted = deleted_ones();
    ASSERT_EQ(deleted.size(), 1u);
    EXPECT_EQ(deleted[0].name, "data");
    EXPECT_EQ(deleted[0].deleted_version, deleted_share_version(now));
    EXPECT_EQ(deleted[0].metadata, before.metadata);

    // Being deleted: no container of its name for 30 s; a Delete Container of it succeeds again.
    EXPECT_EQ(code_of([&] { store->create_container(kAcct, "data", {}, ""); }), "409 ContainerBeingDeleted");
    store->delete_container(kAcct, "data", {});
    EXPECT_EQ(deleted_ones().size(), 1u);
    now += BlobStore::kContainerBeingDeleted;
    EXPECT_EQ(code_of([&] { store->delete_container(kAcct, "data", {}); }), "404 ContainerNotFound");
    store->create_container(kAcct, "data", {}, "");

    // Restored only where no container has the name.
    EXPECT_EQ(code_of([&] { restore("data", "data", deleted[0].deleted_version); }), "409 ContainerAlreadyExists");
    EXPECT_EQ(deleted_ones().size(), 1u);
    store->delete_container(kAcct, "data", {});
    ASSERT_EQ(deleted_ones().size(), 2u);
    EXPECT_EQ(deleted_ones()[0].deleted_version, deleted[0].deleted_version);  // the oldest first

    const ContainerInfo back = restore("data", "data", deleted[0].deleted_version);
    EXPECT_NE(back.etag, before.etag);
    EXPECT_EQ(back.metadata, before.metadata);
    EXPECT_EQ(read("a"), "one");
    EXPECT_EQ(read("dir/b"), std::string(200000, 'b'));
    EXPECT_EQ(deleted_ones().size(), 1u);  // the empty one deleted later stays deleted
}

// As recorded: listed under a fixed lease while being deleted, with an expired one after; the
// whole days of its retention left.
TEST_F(ContainerSoftDeleteTest, ListedAsTheServiceListsADeletedContainer) {
    retain(7);
    store->delete_container(kAcct, "data", {});
    ListOptions o;
    o.deleted = true;
    auto xml_at = [&](time::TimePoint at) {
        return list_containers_xml("http://127.0.0.1/" + std::string(kAcct), o, store->list_containers(kAcct, o), false,
                                   at, 7);
    };
    const std::string version = deleted_share_version(now);
    std::string xml = xml_at(now + std::chrono::seconds(10));
    EXPECT_NE(xml.find("<Name>data</Name><Deleted>true</Deleted><Version>" + version + "</Version>"), std::string::npos)
        << xml;
    EXPECT_NE(xml.find("<LeaseStatus>locked</LeaseStatus><LeaseState>leased</LeaseState><LeaseDuration>fixed"),
              std::string::npos) << xml;
    EXPECT_NE(xml.find("<RemainingRetentionDays>7</RemainingRetentionDays>"), std::string::npos) << xml;
    xml = xml_at(now + std::chrono::hours(24 * 3 + 1));
    EXPECT_NE(xml.find("<LeaseStatus>unlocked</LeaseStatus><LeaseState>expired</LeaseState>"), std::string::npos) << xml;
    EXPECT_EQ(xml.find("LeaseDuration"), std::string::npos) << xml;
    EXPECT_NE(xml.find("<RemainingRetentionDays>4</RemainingRetentionDays>"), std::string::npos) << xml;
    EXPECT_NE(xml.find("<DeletedTime>" + time::format_rfc1123(now) + "</DeletedTime>"), std::string::npos) << xml;
}

TEST_F(ContainerSoftDeleteTest, RestoredUnderAnotherNameWithoutItsLease) {
    retain(7);
    put("a", "one");
    LeaseRequest acquire;
    acquire.action = LeaseAction::acquire;
    acquire.duration = -1;
    const LeaseOutcome outcome = store->lease_container(kAcct, "data", acquire, {}).first;
    Conditions with_lease;
    with_lease.lease_id = outcome.lease.id;
    EXPECT_EQ(code_of([&] { store->delete_container(kAcct, "data", {}); }), "412 LeaseIdMissing");
    store->delete_container(kAcct, "data", with_lease);
    const std::string version = deleted_ones().at(0).deleted_version;

    EXPECT_EQ(code_of([&] { restore("other", "data", "01D6250A6E81EC48"); }), "404 ContainerNotFound");
    EXPECT_EQ(code_of([&] { restore("other", "nope", version); }), "404 ContainerNotFound");
    const ContainerInfo other = restore("other", "data", version);
    EXPECT_EQ(other.name, "other");
    EXPECT_EQ(report_lease(other.lease, now).state, std::string("available"));
    EXPECT_EQ(contents(store->open_blob(kAcct, "other", "a")), "one");
    EXPECT_TRUE(deleted_ones().empty());
    EXPECT_EQ(code_of([&] { store->get_container(kAcct, "data"); }), "404 ContainerNotFound");
}

TEST_F(ContainerSoftDeleteTest, TaggedBlobsOfADeletedContainerAreNotFound) {
    retain(7);
    auto w = bytes("x");
    BlobTraits traits;
    traits.tags = {{"k", "v"}};
    store->put_blob(kAcct, "data", "t", *w, {}, {}, {}, traits);
    const TagExpression where = TagExpression::parse("\"k\" = 'v'", TagExpression::Use::find);
    EXPECT_EQ(store->find_blobs_by_tags(kAcct, std::nullopt, where, "", 100).blobs.size(), 1u);
    store->delete_container(kAcct, "data", {});
    EXPECT_TRUE(store->find_blobs_by_tags(kAcct, std::nullopt, where, "", 100).blobs.empty());
}

// A copy source's URL naming a deleted container's key ("NAME~VERSION") reads nothing: Copy
// Blob and Copy File would otherwise copy the blobs of a deleted (once public) container.
TEST_F(ContainerSoftDeleteTest, ADeletedContainerIsNoCopySource) {
    retain(7);
    put("a", "one");
    store->delete_container(kAcct, "data", {});
    const std::string key = deleted_share_key("data", deleted_ones().at(0).deleted_version);
    const std::string url = "http://127.0.0.1:10000/" + std::string(kAcct) + "/" + key + "/a";
    EXPECT_EQ(code_of([&] {
                  CopySource s = parse_copy_source(url, "127.0.0.1:10000");
                  store->open_copy_source(s.account, s.container, s.name, s.snapshot);
              }),
              "404 CannotVerifyCopySource");
}

TEST_F(ContainerSoftDeleteTest, PurgedWhenItsDaysAreOver) {
    retain(2);
    put("big", std::string(200000, 'z'));
    store->delete_container(kAcct, "data", {});
    const std::string version = deleted_ones().at(0).deleted_version;
    now += std::chrono::hours(24);
    store->purge_deleted_containers(kAcct, now - std::chrono::hours(48));
    EXPECT_EQ(deleted_ones().size(), 1u);
    now += std::chrono::hours(25);
    store->purge_deleted_containers(kAcct, now - std::chrono::hours(48));
    EXPECT_TRUE(deleted_ones().empty());
    EXPECT_EQ(code_of([&] { restore("data", "data", version); }), "404 ContainerNotFound");
    EXPECT_TRUE(store->live_content_ids().empty());  // its files went with it
}

}  // namespace
}  // namespace bai::storage
