// Blob versions (an account's versioning setting): a write that replaces a blob's content or
// metadata keeps the state it replaces as a previous version, a row of its own keyed '@' and its
// version id. Put Blob, Put Block List and the copies hand their old row over to the version (its
// files stay where they are: nothing is copied); Set Blob Metadata and Snapshot Blob, which keep
// the blob's bytes, give the version hard links of its files, as a snapshot shares them.
#include "fake_storage/engine/blob_rows.h"
#include "fake_storage/engine/blob_store.h"

namespace bai::storage {

bool BlobStore::versioning_enabled(const std::string& account) {
    return settings_.flag(account, "blob", "IsVersioningEnabled");
}

std::string new_version_id(db::Database& db, const std::string& account, const BlobInfo& blob) {
    // Named by the time to the tick, as the service names them; two in one tick are a tick apart.
    auto at = time::now();
    for (;; at += std::chrono::nanoseconds(100)) {
        std::string id = time::format_iso8601(at, 7);
        if (id == blob.version_id) continue;
        if (!find_blob(db, account, blob.container, blob.name, nullptr, version_key(id))) return id;
    }
}

std::string latest_version_tier(db::Database& db, const std::string& account, const std::string& container,
                                const std::string& name) {
    auto q = db.prepare("SELECT tier FROM blobs WHERE account = ?1 AND container = ?2 AND name = ?3"
                        " AND substr(snapshot, 1, 1) = '@' ORDER BY snapshot DESC LIMIT 1");
    q.bind(1, account).bind(2, container).bind(3, name);
    return q.step() ? q.column_text(0) : std::string();
}

std::string keep_row_as_version(db::Database& db, const std::string& account, const BlobInfo& base) {
    const std::string id = base.version_id.empty() ? new_version_id(db, account, base) : base.version_id;
    db.prepare("UPDATE blobs SET snapshot = ?2, version_id = ?3, lease = '' WHERE id = ?1")
        .bind(1, base.row)
        .bind(2, version_key(id))
        .bind(3, id)
        .run();
    return id;
}

std::string keep_copy_as_version(db::Database& db, ContentFiles& files, const std::string& account, const BlobInfo& base,
                                 std::vector<std::pair<ContentKind, std::string>>& linked) {
    const std::string id = base.version_id.empty() ? new_version_id(db, account, base) : base.version_id;
    std::vector<CommittedBlock> blocks = committed_blocks_of(db, base.row);
    std::vector<PageRow> pages = page_rows_of(db, base.row);
    BlockLinks links(files, account);
    std::string content_id;
    try {
        if (!base.content_id.empty()) content_id = files.link(account, ContentKind::blob, base.content_id);
        if (!content_id.empty()) links.made().emplace_back(ContentKind::blob, content_id);
        for (CommittedBlock& b : blocks) {
            if (!b.content_id.empty()) b.content_id = links.of(b.content_id);
        }
        for (PageRow& p : pages) {
            if (!p.content_id.empty()) p.content_id = links.of(p.content_id);
        }
    } catch (...) {
        for (auto& made : links.made()) linked.push_back(made);
        throw;
    }
    for (auto& made : links.made()) linked.push_back(made);
    insert_blob_copy(db, base, version_key(id), id, content_id, base.metadata, blocks, pages);
    return id;
}

}  // namespace bai::storage
