// Snapshot Blob: a read-only copy of a blob as it is, a row of its own (the blob's name and the
// snapshot's time) sharing the blob's content files through hard links, as copies do.
#include "common/crypto/random_id.h"
#include "fake_storage/engine/blob_rows.h"
#include "fake_storage/engine/blob_store.h"
#include "fake_storage/engine/storage_error.h"

namespace bai::storage {

using std::int64_t;

BlobInfo BlobStore::snapshot_blob(const std::string& account, const std::string& container, const std::string& name,
                                  const std::optional<Metadata>& metadata, const Conditions& conditions) {
    std::lock_guard lock(lock_for(account, container, name));
    // Under the lock the blob's bytes stay as read: link its files before the row is written.
    std::optional<BlobInfo> base;
    std::vector<CommittedBlock> blocks;
    std::vector<PageRow> pages;
    db_.read([&](db::Database& db) {
        base = find_blob(db, account, container, name);
        if (base) blocks = committed_blocks_of(db, base->row);
        if (base) pages = page_rows_of(db, base->row);
    });
    if (!base) blob_not_found();
    BlockLinks links(files_, account);
    std::vector<std::pair<ContentKind, std::string>>& linked = links.made();
    std::string content_id;
    try {
        if (!base->content_id.empty()) {
            content_id = files_.link(account, ContentKind::blob, base->content_id);
            linked.emplace_back(ContentKind::blob, content_id);
        }
        for (CommittedBlock& b : blocks) {
            if (!b.content_id.empty()) b.content_id = links.of(b.content_id);
        }
        for (PageRow& p : pages) {
            if (!p.content_id.empty()) p.content_id = links.of(p.content_id);
        }
    } catch (...) {
        remove_contents(files_, account, linked);
        throw;
    }
    BlobInfo snapshot;
    // With versioning, a snapshot makes a new current version too (the service's rule): the blob
    // as it was is kept as a previous version.
    const bool versioned = versioning_enabled(account);
    const size_t snapshot_links = linked.size();
    try {
        write([&](db::Database& db) {
            while (linked.size() > snapshot_links) {  // a retried transaction's version links
                remove_contents(files_, account, {linked.back()});
                linked.pop_back();
            }
            BlobInfo blob = require_blob(db, account, container, name);
            check_write_conditions(conditions, version_of(blob), "", "");
            check_lease_if_named(blob.lease, conditions.lease_id, clock_now(), LeaseTarget::blob);
            refuse_on_incremental_copy(blob);
            const std::string id = insert_snapshot_row(db, account, blob, content_id, metadata.value_or(blob.metadata), blocks,
                                                       pages);
            std::string current;
            if (versioned || !blob.version_id.empty()) {
                keep_copy_as_version(db, files_, account, blob, linked);
                current = versioned ? new_version_id(db, account, blob) : "";
                db.prepare("UPDATE blobs SET version_id = ?2 WHERE id = ?1").bind(1, blob.row).bind(2, current).run();
            }
            snapshot = require_blob(db, account, container, name, id);
            snapshot.version_id = current;  // the blob's new current version, which the answer names
        });
    } catch (...) {
        remove_contents(files_, account, linked);
        throw;
    }
    return snapshot;
}

std::string insert_snapshot_row(db::Database& db, const std::string& account, const BlobInfo& base, const std::string& content_id,
                                const Metadata& metadata, const std::vector<CommittedBlock>& blocks,
                                const std::vector<PageRow>& pages) {
    // Snapshots are named by their time, to the tick; two in one tick are one tick apart.
    auto at = time::now();
    std::string id;
    for (;; at += std::chrono::nanoseconds(100)) {
        id = time::format_iso8601(at, 7);
        if (!find_blob(db, account, base.container, base.name, nullptr, id)) break;
    }
    insert_blob_copy(db, base, id, "", content_id, metadata, blocks, pages);
    return id;
}

std::int64_t insert_blob_copy(db::Database& db, const BlobInfo& base, const std::string& key, const std::string& version_id,
                              const std::string& content_id, const Metadata& metadata,
                              const std::vector<CommittedBlock>& blocks, const std::vector<PageRow>& pages) {
    auto q = db.prepare(
        "INSERT INTO blobs(account, container, name, snapshot, content_id, size, etag, created,"
        " last_modified, content, metadata, inline_body, composed, lease, blob_type, block_count, sealed,"
        " sequence_number, tier, tier_changed, archive_status, tags, copy_state, version_id)"
        " SELECT account, container, name, ?2, ?3, size, etag, created, last_modified, content, ?4,"
        " inline_body, composed, '', blob_type, block_count, sealed, sequence_number, tier, tier_changed,"
        " archive_status, tags, copy_state, ?5 FROM blobs WHERE id = ?1 RETURNING id");
    q.bind(1, base.row).bind(2, key).bind(3, content_id).bind(4, metadata_to_json(metadata)).bind(5, version_id);
    q.step();
    const int64_t row = q.column_int(0);
    q.reset();
    insert_committed_blocks(db, row, blocks);
    insert_page_rows(db, row, pages);
    return row;
}

void refuse_on_incremental_copy(const BlobInfo& blob) {
    if (blob.copy.incremental && blob.snapshot.empty()) {
        fail(409, "OperationNotAllowedOnIncrementalCopyBlob",
             "The specified operation is not allowed on an incremental copy blob.");
    }
}

}  // namespace bai::storage
