// BlobStore's staged blocks over time: the service drops a blob's uncommitted blocks a week after
// its last Put Block, so that uploads that were never committed (a client that died) do not hold
// disk forever. The daemon sweeps at start and the job engine every hour of its clock.
#include "fake_storage/engine/blob_store.h"

namespace bai::storage {

StagedBlocks BlobStore::discard_staged_before(time::TimePoint before) {
    const std::int64_t limit = time::to_ticks(before);
    struct Blob {
        std::string account, container, name;
    };
    std::vector<Blob> stale;
    db_.read([&](db::Database& db) {
        auto q = db.prepare(
            "SELECT account, container, blob FROM uncommitted_blocks GROUP BY account, container, blob"
            " HAVING max(created) < ?1");
        q.bind(1, limit);
        while (q.step()) stale.push_back({q.column_text(0), q.column_text(1), q.column_text(2)});
    });
    StagedBlocks dropped;
    for (const Blob& blob : stale) {
        const std::string& account = blob.account;
        const std::string& container = blob.container;
        // Under the blob's lock, and checked again: a Put Block may have come since the query.
        std::lock_guard lock(lock_for(account, container, blob.name));
        std::vector<std::string> files;
        std::uint64_t bytes = 0;
        write([&](db::Database& db) {
            files.clear();
            bytes = 0;
            auto last = db.prepare(
                "SELECT max(created) FROM uncommitted_blocks WHERE account = ?1 AND container = ?2 AND blob = ?3");
            last.bind(1, account).bind(2, container).bind(3, blob.name);
            if (!last.step() || last.is_null(0) || last.column_int(0) >= limit) return;
            auto q = db.prepare(
                "SELECT content_id, size FROM uncommitted_blocks WHERE account = ?1 AND container = ?2 AND blob = ?3");
            q.bind(1, account).bind(2, container).bind(3, blob.name);
            while (q.step()) {
                files.push_back(q.column_text(0));
                bytes += static_cast<std::uint64_t>(q.column_int(1));
            }
            db.prepare("DELETE FROM uncommitted_blocks WHERE account = ?1 AND container = ?2 AND blob = ?3")
                .bind(1, account)
                .bind(2, container)
                .bind(3, blob.name)
                .run();
        });
        if (files.empty()) continue;
        for (const std::string& id : files) files_.remove(account, ContentKind::block, id);
        dropped.blobs += 1;
        dropped.blocks += files.size();
        dropped.bytes += bytes;
    }
    return dropped;
}

std::vector<StagedBlocks> BlobStore::staged_blocks_by_account() {
    std::vector<StagedBlocks> usage;
    db_.read([&](db::Database& db) {
        auto q = db.prepare(
            "SELECT account, count(DISTINCT container || '/' || blob), count(*), sum(size)"
            " FROM uncommitted_blocks GROUP BY account ORDER BY account");
        while (q.step()) {
            usage.push_back({q.column_text(0), static_cast<std::uint64_t>(q.column_int(1)),
                             static_cast<std::uint64_t>(q.column_int(2)), static_cast<std::uint64_t>(q.column_int(3))});
        }
    });
    return usage;
}

}  // namespace bai::storage
