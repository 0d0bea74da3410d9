// Append blobs, snapshots, tags and tiers in the BlobStore.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <tuple>

#include "tests/fake_storage/blob_store_fixture.h"

namespace bai::storage {
namespace {

using bai::testing::kAcct;

// The content files on disk (not those being received): what metadata does not refer to must go.
size_t files_on_disk(const std::filesystem::path& storage) {
    size_t n = 0;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(storage)) {
        if (entry.is_regular_file() && entry.path().parent_path().filename() != "tmp") ++n;
    }
    return n;
}

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
    EXPECT_EQ(files_on_disk(dir / "storage"), 0u);
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
    EXPECT_EQ(files_on_disk(dir / "storage"), 0u);
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

namespace bai::storage {
namespace {

using bai::testing::kAcct;

// Equal bytes; else where they first differ (the bytes are too long to print).
::testing::AssertionResult same(const std::string& a, const std::string& b) {
    if (a == b) return ::testing::AssertionSuccess();
    size_t at = 0;
    while (at < a.size() && at < b.size() && a[at] == b[at]) ++at;
    return ::testing::AssertionFailure() << "sizes " << a.size() << " and " << b.size() << ", first difference at " << at;
}

class PageBlobTest : public BlobStoreTest {
protected:
    BlobInfo create_page(const std::string& name, std::uint64_t size) {
        auto empty = bytes("");
        BlobTraits traits;
        traits.type = BlobType::page;
        traits.page_blob_size = size;
        return store->put_blob(bai::testing::kAcct, "data", name, *empty, {}, {}, {}, traits);
    }
    BlobInfo write(const std::string& name, std::uint64_t at, const std::string& body, const SequenceConditions& s = {}) {
        auto w = files->begin(false);
        w->append(body);
        return store->put_pages(bai::testing::kAcct, "data", name, at, *w, {}, s);
    }
    std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges(const std::string& name, const std::string& prev = "") {
        auto list = store->get_page_ranges(bai::testing::kAcct, "data", name, "", std::nullopt, prev, {});
        return prev.empty() ? list.pages : list.cleared;
    }
    std::vector<std::pair<std::uint64_t, std::uint64_t>> changed(const std::string& name, const std::string& prev) {
        return store->get_page_ranges(bai::testing::kAcct, "data", name, "", std::nullopt, prev, {}).pages;
    }
};

using Ranges = std::vector<std::pair<std::uint64_t, std::uint64_t>>;

TEST_F(PageBlobTest, UnwrittenPagesReadAsZerosAndWritesOverlay) {
    create_page("disk", 4096);
    EXPECT_TRUE(same(read("disk"), std::string(4096, '\0')));
    write("disk", 512, std::string(1024, 'a'));
    write("disk", 1024, std::string(512, 'b'));  // inside the first run
    std::string expected(4096, '\0');
    expected.replace(512, 1024, std::string(1024, 'a'));
    expected.replace(1024, 512, std::string(512, 'b'));
    EXPECT_TRUE(same(read("disk"), expected));
    EXPECT_EQ(ranges("disk"), (Ranges{{512, 1023}, {1024, 1535}}));  // as written, not merged
    store->clear_pages(bai::testing::kAcct, "data", "disk", 512, 1024, {}, {});
    expected.replace(512, 512, std::string(512, '\0'));
    EXPECT_TRUE(same(read("disk"), expected));
    EXPECT_EQ(ranges("disk"), (Ranges{{1024, 1535}}));
    // A large write (a file of its own) across the end of a small one.
    std::string big(kInlineLimit * 2, 'c');
    write("disk", 0, big.substr(0, 2048));
    create_page("large", 1 << 20);
    write("large", 4096, big);
    EXPECT_TRUE(same(read("large").substr(4096, big.size()), big));
    write("large", 8192, std::string(512, 'd'));
    std::string piece(1024, '\0');
    store->open_blob(bai::testing::kAcct, "data", "large").read(piece.data(), piece.size(), 7680);
    EXPECT_TRUE(same(piece, std::string(512, 'c') + std::string(512, 'd')));
}

TEST_F(PageBlobTest, RefusalsAreTheServices) {
    create_page("disk", 1024);
    EXPECT_EQ(expect_error([&] { write("disk", 100, std::string(512, 'a')); }, "InvalidPageRange"), 416);
    EXPECT_EQ(expect_error([&] { write("disk", 0, std::string(100, 'a')); }, "InvalidPageRange"), 416);
    EXPECT_EQ(expect_error([&] { write("disk", 1024, std::string(512, 'a')); }, "InvalidPageRange"), 416);
    EXPECT_EQ(expect_error([&] { write("disk", 0, std::string(512, 'a'), {std::nullopt, std::nullopt, 3}); },
                           "SequenceNumberConditionNotMet"),
              412);
    put("block", "x");
    EXPECT_EQ(expect_error([&] { write("block", 0, std::string(512, 'a')); }, "InvalidBlobType"), 409);
    EXPECT_EQ(expect_error([&] {
                  store->set_page_blob_properties(bai::testing::kAcct, "data", "disk", std::nullopt, 1000, std::nullopt,
                                                  std::nullopt, {});
              },
                           "InvalidHeaderValue"),
              400);
}

TEST_F(PageBlobTest, ResizeDropsPagesAndSequenceNumbersMove) {
    create_page("disk", 2048);
    write("disk", 1024, std::string(1024, 'z'));
    auto resize = [&](std::uint64_t size) {
        return store->set_page_blob_properties(bai::testing::kAcct, "data", "disk", std::nullopt, size, std::nullopt,
                                               std::nullopt, {});
    };
    resize(1536);
    resize(4096);
    std::string expected(4096, '\0');
    expected.replace(1024, 512, std::string(512, 'z'));
    EXPECT_TRUE(same(read("disk"), expected));  // what was cut is not back
    auto seq = [&](SequenceAction a, std::optional<std::int64_t> n) {
        return store->set_page_blob_properties(bai::testing::kAcct, "data", "disk", std::nullopt, std::nullopt, a, n, {})
            .sequence_number;
    };
    EXPECT_EQ(seq(SequenceAction::increment, std::nullopt), 1);
    EXPECT_EQ(seq(SequenceAction::update, 10), 10);
    EXPECT_EQ(seq(SequenceAction::max, 5), 10);
    EXPECT_EQ(seq(SequenceAction::max, 100), 100);
}

// Many small writes are compacted into one file; snapshots and copies keep their pages; a diff
// against a snapshot names what changed and what was cleared.
TEST_F(PageBlobTest, CompactionSnapshotsCopiesAndDiffs) {
    const std::uint64_t size = 16 << 20;
    create_page("disk", size);
    std::string expected(size, '\0');
    for (int i = 0; i < 150; ++i) {
        // Writes past the inline limit become files; there are more than the compaction bound.
        const std::uint64_t at = (static_cast<std::uint64_t>(i) * 97 % 150) * 65536;
        std::string body(i % 2 == 0 ? 65536 + 512 : 4096, static_cast<char>('a' + i % 26));
        if (at + body.size() > size) continue;
        write("disk", at, body);
        expected.replace(at, body.size(), body);
    }
    OpenBlob open = store->open_blob(bai::testing::kAcct, "data", "disk");
    std::set<int> fds;
    for (const BlobPart& p : open.parts) if (p.fd >= 0) fds.insert(p.fd);
    EXPECT_LE(fds.size(), 70u);
    EXPECT_TRUE(same(contents(open), expected));

    BlobInfo snap = store->snapshot_blob(bai::testing::kAcct, "data", "disk", std::nullopt, {});
    write("disk", 0, std::string(512, '!'));
    store->clear_pages(bai::testing::kAcct, "data", "disk", 65536, 65536 + 512, {}, {});
    EXPECT_TRUE(same(contents(store->open_blob(bai::testing::kAcct, "data", "disk", snap.snapshot)), expected));
    EXPECT_EQ(changed("disk", snap.snapshot), (Ranges{{0, 511}}));
    EXPECT_EQ(ranges("disk", snap.snapshot), (Ranges{{65536, 65536 + 511}}));

    BlobStore::CopyRequest copy;
    copy.source_snapshot = snap.snapshot;
    store->copy_blob(bai::testing::kAcct, "data", "copy", bai::testing::kAcct, "data", "disk", copy, {});
    EXPECT_TRUE(same(read("copy"), expected));
    store->create_container("other", "box", {}, "");
    store->copy_blob("other", "box", "far", bai::testing::kAcct, "data", "disk", {}, {});
    std::string now = expected;
    now.replace(0, 512, std::string(512, '!'));
    now.replace(65536, 512, std::string(512, '\0'));
    EXPECT_TRUE(same(contents(store->open_blob("other", "box", "far")), now));

    store->delete_blob(bai::testing::kAcct, "data", "disk", {}, DeleteSnapshots::include);
    store->delete_blob(bai::testing::kAcct, "data", "copy", {});
    store->delete_container("other", "box", {});
    EXPECT_TRUE(store->live_content_ids().empty());
    EXPECT_EQ(files_on_disk(dir / "storage"), 0u);
}

// Incremental copies: each makes a snapshot of the destination holding the source snapshot's
// pages; the destination refuses writes; across accounts the pages are copied, within one they
// are linked; nothing stays on disk once the blobs are gone.
TEST_F(PageBlobTest, IncrementalCopiesSnapshotTheirDestination) {
    const std::string big(kInlineLimit * 2, 'b');
    create_page("disk", 1 << 20);
    write("disk", 0, std::string(512, 'a'));
    write("disk", 4096, big);
    BlobInfo first = store->snapshot_blob(kAcct, "data", "disk", std::nullopt, {});
    const std::string at_first = read("disk");
    BlobStore::CopyRequest copy;
    copy.source_url = "http://127.0.0.1/devstoreaccount1/data/disk?snapshot=" + first.snapshot;
    copy.source_snapshot = first.snapshot;
    store->create_container("other", "box", {}, "");
    BlobInfo near = store->incremental_copy(kAcct, "data", "backup", kAcct, "data", "disk", copy, {});
    BlobInfo far = store->incremental_copy("other", "box", "backup", kAcct, "data", "disk", copy, {});
    for (const auto& [account, container, blob] : {std::tuple{std::string(kAcct), "data", near},
                                                   std::tuple{std::string("other"), "box", far}}) {
        EXPECT_TRUE(blob.copy.incremental);
        EXPECT_EQ(blob.copy.source_snapshot, first.snapshot);
        ASSERT_FALSE(blob.copy.destination_snapshot.empty());
        EXPECT_TRUE(same(contents(store->open_blob(account, container, "backup", blob.copy.destination_snapshot)),
                         at_first));
        EXPECT_TRUE(store->get_blob(account, container, "backup", blob.copy.destination_snapshot).copy.incremental);
    }
    EXPECT_EQ(expect_error([&] { write("backup", 0, std::string(512, 'x')); }, "OperationNotAllowedOnIncrementalCopyBlob"),
              409);
    EXPECT_EQ(expect_error([&] { store->snapshot_blob(kAcct, "data", "backup", std::nullopt, {}); },
                           "OperationNotAllowedOnIncrementalCopyBlob"),
              409);

    write("disk", 0, std::string(512, 'c'));
    BlobInfo second = store->snapshot_blob(kAcct, "data", "disk", std::nullopt, {});
    copy.source_snapshot = second.snapshot;
    store = std::make_unique<BlobStore>(*db, *files);  // the copy state is kept across restarts
    BlobInfo again = store->incremental_copy(kAcct, "data", "backup", kAcct, "data", "disk", copy, {});
    EXPECT_GT(again.copy.destination_snapshot, near.copy.destination_snapshot);
    EXPECT_TRUE(same(contents(store->open_blob(kAcct, "data", "backup", again.copy.destination_snapshot)), read("disk")));
    EXPECT_TRUE(same(contents(store->open_blob(kAcct, "data", "backup", near.copy.destination_snapshot)), at_first));
    copy.source_snapshot = first.snapshot;
    EXPECT_EQ(expect_error([&] { store->incremental_copy(kAcct, "data", "backup", kAcct, "data", "disk", copy, {}); },
                           "IncrementalCopyOfEarlierVersionSnapshotNotAllowed"),
              409);
    copy.source_snapshot.clear();
    EXPECT_EQ(expect_error([&] { store->incremental_copy(kAcct, "data", "fresh", kAcct, "data", "disk", copy, {}); },
                           "IncrementalCopySourceMustBeSnapshot"),
              409);

    store->delete_blob(kAcct, "data", "disk", {}, DeleteSnapshots::include);
    store->delete_blob(kAcct, "data", "backup", {}, DeleteSnapshots::include);
    store->delete_container("other", "box", {});
    EXPECT_TRUE(store->live_content_ids().empty());
    EXPECT_EQ(files_on_disk(dir / "storage"), 0u);
}

}  // namespace
}  // namespace bai::storage
