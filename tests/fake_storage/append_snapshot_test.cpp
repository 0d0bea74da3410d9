// Append blobs, snapshots, tags and tiers in the BlobStore.
#include <gtest/gtest.h>

#include "tests/fake_storage/blob_store_fixture.h"

namespace bai::storage {
namespace {

using bai::testing::kAcct;

class AppendBlobTest : public BlobStoreTest {
protected:
    BlobInfo create_append(const std::string& name) {
        auto empty = bytes("");
        BlobTraits traits;
        traits.type = BlobType::append;
        return store->put_blob(kAcct, "data", name, *empty, {}, {}, {}, traits);
    }
    std::pair<BlobInfo, std::uint64_t> append(const std::string& name, const std::string& body,
                                              const AppendConditions& a = {}, const Conditions& c = {}) {
        auto w = bytes(body);
        return store->append_block(kAcct, "data", name, *w, c, a);
    }
    // A writer that spilled into a file (the body of a large Append Block).
    std::pair<BlobInfo, std::uint64_t> append_large(const std::string& name, const std::string& body) {
        auto w = files->begin(false);
        w->append(body);
        EXPECT_FALSE(w->in_memory());
        return store->append_block(kAcct, "data", name, *w, {}, {});
    }
};

TEST_F(AppendBlobTest, BlocksAppendInOrderAndReportOffsets) {
    BlobInfo created = create_append("log");
    EXPECT_EQ(created.type, BlobType::append);
    EXPECT_EQ(created.size, 0u);
    EXPECT_EQ(append("log", "abcdef").second, 0u);
    EXPECT_EQ(append("log", "123456").second, 6u);
    auto [blob, offset] = append("log", "T");
    EXPECT_EQ(offset, 12u);
    EXPECT_EQ(blob.committed_block_count, 3u);
    EXPECT_EQ(read("log"), "abcdef123456T");
    EXPECT_EQ(store->get_blob(kAcct, "data", "log").type, BlobType::append);
}

// Small appends stay in the tail; large ones become parts that merge, so that a reader holds few
// descriptors and the bytes read back whole, across restarts of the store.
TEST_F(AppendBlobTest, PartsMergeAndTheWholeReadsBack) {
    create_append("big");
    std::string expected;
    for (int i = 0; i < 40; ++i) {
        std::string block(i % 3 == 0 ? 70000 + i : 3000 + i, static_cast<char>('a' + i % 26));
        if (i % 7 == 0) {
            append_large("big", block + std::string(70000, 'z'));
            expected += block + std::string(70000, 'z');
        } else {
            append("big", block);
            expected += block;
        }
    }
    OpenBlob open = store->open_blob(kAcct, "data", "big");
    EXPECT_EQ(open.info.size, expected.size());
    EXPECT_EQ(open.info.committed_block_count, 40u);
    EXPECT_LE(open.parts.size(), 8u);
    EXPECT_EQ(contents(open), expected);
    // A read across a part and the tail, and one within the tail.
    std::string piece(100, '\0');
    ASSERT_EQ(open.read(piece.data(), piece.size(), expected.size() - 100), 100);
    EXPECT_EQ(piece, expected.substr(expected.size() - 100));
    store = std::make_unique<BlobStore>(*db, *files);
    EXPECT_EQ(read("big"), expected);
    // Only the live part files remain on disk once the blob is gone.
    store->delete_blob(kAcct, "data", "big", {});
    EXPECT_TRUE(store->live_content_ids().empty());
}

TEST_F(AppendBlobTest, RefusalsAreTheServices) {
    put("block", "x");
    EXPECT_EQ(expect_error([&] { append("block", "a"); }, "InvalidBlobType"), 409);
    EXPECT_EQ(expect_error([&] { append("missing", "a"); }, "BlobNotFound"), 404);
    create_append("log");
    EXPECT_EQ(expect_error([&] { append("log", ""); }, "InvalidHeaderValue"), 400);
    append("log", "a", {1, 0});
    EXPECT_EQ(expect_error([&] { append("log", "a", {1, std::nullopt}); }, "MaxBlobSizeConditionNotMet"), 412);
    EXPECT_EQ(expect_error([&] { append("log", "a", {std::nullopt, 0}); }, "AppendPositionConditionNotMet"), 412);
    append("log", "b", {std::nullopt, 1});
    Conditions stale;
    stale.if_match = "\"0x1\"";
    EXPECT_EQ(expect_error([&] { append("log", "c", {}, stale); }, "ConditionNotMet"), 412);
    store->seal_blob(kAcct, "data", "log", {});
    EXPECT_TRUE(store->get_blob(kAcct, "data", "log").sealed);
    EXPECT_EQ(expect_error([&] { append("log", "c"); }, "BlobIsSealed"), 409);
    EXPECT_EQ(expect_error([&] { store->seal_blob(kAcct, "data", "log", {}); }, "BlobAlreadySealed"), 409);
    EXPECT_EQ(expect_error([&] { store->seal_blob(kAcct, "data", "block", {}); }, "InvalidBlobType"), 409);
    EXPECT_EQ(read("log"), "ab");
    // A new body (Put Blob) replaces the sealed append blob.
    put("log", "new");
    EXPECT_EQ(store->get_blob(kAcct, "data", "log").type, BlobType::block);
}

TEST_F(AppendBlobTest, SnapshotsKeepTheBytesOfTheirTime) {
    create_append("log");
    append("log", "hello");
    BlobInfo snap = store->snapshot_blob(kAcct, "data", "log", std::nullopt, {});
    EXPECT_FALSE(snap.snapshot.empty());
    append_large("log", std::string(100000, 'w'));
    EXPECT_EQ(contents(store->open_blob(kAcct, "data", "log", snap.snapshot)), "hello");
    EXPECT_EQ(store->get_blob(kAcct, "data", "log", snap.snapshot).committed_block_count, 1u);
    BlobInfo snap2 = store->snapshot_blob(kAcct, "data", "log", Metadata{{"k", "v"}}, {});
    EXPECT_NE(snap2.snapshot, snap.snapshot);
    EXPECT_EQ(snap2.metadata.at("k"), "v");
    append("log", "!");
    EXPECT_EQ(contents(store->open_blob(kAcct, "data", "log", snap2.snapshot)), "hello" + std::string(100000, 'w'));

    // A copy of a snapshot is a blob of its own, with the snapshot's bytes.
    BlobStore::CopyRequest copy;
    copy.source_snapshot = snap.snapshot;
    copy.source_url = "http://x/devstoreaccount1/data/log?snapshot=" + snap.snapshot;
    BlobInfo copied = store->copy_blob(kAcct, "data", "copy", kAcct, "data", "log", copy, {});
    EXPECT_EQ(copied.type, BlobType::append);
    EXPECT_EQ(copied.copy.progress, "5/5");
    EXPECT_EQ(copied.copy.status, "success");

    EXPECT_EQ(expect_error([&] { store->delete_blob(kAcct, "data", "log", {}); }, "SnapshotsPresent"), 409);
    ListOptions all;
    all.snapshots = true;
    EXPECT_EQ(store->list_blobs(kAcct, "data", all).entries.size(), 4u);  // copy, 2 snapshots, log
    store->delete_blob(kAcct, "data", "log", {}, DeleteSnapshots::none, snap.snapshot);
    store->delete_blob(kAcct, "data", "log", {}, DeleteSnapshots::only);
    EXPECT_EQ(store->list_blobs(kAcct, "data", all).entries.size(), 2u);
    EXPECT_EQ(read("log"), "hello" + std::string(100000, 'w') + "!");
    store->snapshot_blob(kAcct, "data", "log", std::nullopt, {});
    store->delete_blob(kAcct, "data", "log", {}, DeleteSnapshots::include);
    store->delete_blob(kAcct, "data", "copy", {});
    EXPECT_TRUE(store->list_blobs(kAcct, "data", all).entries.empty());
    EXPECT_TRUE(store->live_content_ids().empty());
}

// Listing with snapshots pages through a blob's snapshots without repeating or losing one.
TEST_F(AppendBlobTest, SnapshotListingPagesOnMarkers) {
    put("a", "1");
    for (int i = 0; i < 3; ++i) store->snapshot_blob(kAcct, "data", "a", std::nullopt, {});
    put("b", "2");
    ListOptions o;
    o.snapshots = true;
    o.max_results = 2;
    std::vector<std::string> seen;
    for (int pages = 0; pages < 10; ++pages) {
        BlobListPage page = store->list_blobs(kAcct, "data", o);
        for (const BlobListEntry& e : page.entries) seen.push_back(e.blob.name + "@" + e.blob.snapshot);
        if (page.next_marker.empty()) break;
        o.marker = page.next_marker;
    }
    ASSERT_EQ(seen.size(), 5u);
    EXPECT_EQ(seen[3], "a@");  // the blob after its snapshots
    EXPECT_EQ(seen[4], "b@");
}

TEST_F(AppendBlobTest, TagsAndTiersChangeNoVersion) {
    BlobInfo before = put("t", "x");
    BlobInfo tagged = store->set_blob_tags(kAcct, "data", "t", "", {{"k", "v"}}, {});
    EXPECT_EQ(tagged.etag, before.etag);
    EXPECT_EQ(store->get_blob(kAcct, "data", "t").tags, (Tags{{"k", "v"}}));
    Conditions wrong;
    wrong.if_tags = std::make_shared<TagExpression>(TagExpression::parse("k = 'w'", TagExpression::Use::condition));
    EXPECT_EQ(expect_error([&] { store->set_blob_metadata(kAcct, "data", "t", {}, wrong); }, "ConditionNotMet"), 412);

    auto [archived, rehydrated] = store->set_blob_tier(kAcct, "data", "t", "", "archive", {});
    EXPECT_EQ(archived.tier, "Archive");
    EXPECT_FALSE(rehydrated);
    EXPECT_EQ(archived.etag, before.etag);
    EXPECT_EQ(expect_error([&] { store->set_blob_tier(kAcct, "data", "t", "", "Warm", {}); }, "InvalidHeaderValue"), 400);
    EXPECT_TRUE(store->set_blob_tier(kAcct, "data", "t", "", "Hot", {}).second);

    auto where = TagExpression::parse("k = 'v'", TagExpression::Use::find);
    TaggedBlobPage found = store->find_blobs_by_tags(kAcct, std::nullopt, where, "", 10);
    ASSERT_EQ(found.blobs.size(), 1u);
    EXPECT_EQ(found.blobs[0].name, "t");
    EXPECT_EQ(expect_error([&] { store->find_blobs_by_tags(kAcct, "nope", where, "", 10); }, "ContainerNotFound"), 404);
}

// A database written before blob types and snapshots existed (schema 6) keeps its blobs.
TEST(StorageSchema, MigratesBlobsOfTheEarlierSchema) {
    bai::testing::TestDir dir;
    {
        auto old = db::Database::open(dir / "state.db");
        old->exec(R"sql(
INSERT INTO schema_migrations VALUES ('storage', 6, '2026-11-01T00:00:00Z');
CREATE TABLE containers (account TEXT NOT NULL, name TEXT NOT NULL, etag TEXT NOT NULL, created INTEGER NOT NULL,
  last_modified INTEGER NOT NULL, metadata TEXT NOT NULL DEFAULT '', public_access TEXT NOT NULL DEFAULT '',
  lease TEXT NOT NULL DEFAULT '', PRIMARY KEY (account, name)) WITHOUT ROWID;
CREATE TABLE blobs (id INTEGER PRIMARY KEY, account TEXT NOT NULL, container TEXT NOT NULL, name TEXT NOT NULL,
  content_id TEXT NOT NULL, size INTEGER NOT NULL, etag TEXT NOT NULL, created INTEGER NOT NULL,
  last_modified INTEGER NOT NULL, content TEXT NOT NULL DEFAULT '', metadata TEXT NOT NULL DEFAULT '',
  inline_body BLOB, composed INTEGER NOT NULL DEFAULT 0, lease TEXT NOT NULL DEFAULT '',
  UNIQUE (account, container, name));
CREATE TABLE committed_blocks (blob_id INTEGER NOT NULL REFERENCES blobs(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL, block_id TEXT NOT NULL, offset INTEGER NOT NULL, size INTEGER NOT NULL,
  content_id TEXT NOT NULL DEFAULT '', PRIMARY KEY (blob_id, seq)) WITHOUT ROWID;
CREATE TABLE uncommitted_blocks (account TEXT NOT NULL, container TEXT NOT NULL, blob TEXT NOT NULL,
  block_id TEXT NOT NULL, content_id TEXT NOT NULL, size INTEGER NOT NULL, created INTEGER NOT NULL,
  PRIMARY KEY (account, container, blob, block_id)) WITHOUT ROWID;
CREATE TABLE shares (account TEXT NOT NULL, name TEXT NOT NULL, etag TEXT NOT NULL, created INTEGER NOT NULL,
  last_modified INTEGER NOT NULL, metadata TEXT NOT NULL DEFAULT '', quota INTEGER NOT NULL,
  PRIMARY KEY (account, name)) WITHOUT ROWID;
CREATE TABLE share_entries (id INTEGER PRIMARY KEY, account TEXT NOT NULL, share TEXT NOT NULL, path TEXT NOT NULL,
  parent TEXT NOT NULL, name TEXT NOT NULL, is_dir INTEGER NOT NULL, size INTEGER NOT NULL DEFAULT 0,
  etag TEXT NOT NULL, last_modified INTEGER NOT NULL, creation_time INTEGER NOT NULL, last_write_time INTEGER NOT NULL,
  change_time INTEGER NOT NULL, attributes TEXT NOT NULL, content TEXT NOT NULL DEFAULT '',
  metadata TEXT NOT NULL DEFAULT '', UNIQUE (account, share, path));
CREATE TABLE pending_ranges (id INTEGER PRIMARY KEY, account TEXT NOT NULL, share TEXT NOT NULL, path TEXT NOT NULL,
  offset INTEGER NOT NULL, content_id TEXT NOT NULL, data BLOB);
CREATE TABLE service_settings (account TEXT NOT NULL, service TEXT NOT NULL, properties TEXT NOT NULL,
  PRIMARY KEY (account, service)) WITHOUT ROWID;
INSERT INTO containers VALUES ('devstoreaccount1', 'data', '"0x1"', 0, 0, '', '', '');
INSERT INTO blobs(id, account, container, name, content_id, size, etag, created, last_modified, inline_body)
  VALUES (7, 'devstoreaccount1', 'data', 'old', '', 5, '"0x2"', 0, 0, X'68656C6C6F');
INSERT INTO committed_blocks VALUES (7, 0, 'YQ==', 0, 5, '');
)sql");
    }
    auto migrated = db::Database::open(dir / "state.db");
    migrate_storage_schema(*migrated);
    ContentFiles files(dir / "storage", false);
    BlobStore store(*migrated, files);
    OpenBlob old = store.open_blob(kAcct, "data", "old");
    EXPECT_EQ(old.bytes, "hello");
    EXPECT_EQ(old.info.type, BlobType::block);
    EXPECT_EQ(store.get_block_lists(kAcct, "data", "old").committed.size(), 1u);
    // The blob's blocks still go with it (the foreign key follows the rebuilt table).
    store.delete_blob(kAcct, "data", "old", {});
    migrated->read([](db::Database& db) {
        auto q = db.prepare("SELECT count(*) FROM committed_blocks");
        q.step();
        EXPECT_EQ(q.column_int(0), 0);
    });
}

}  // namespace
}  // namespace bai::storage
