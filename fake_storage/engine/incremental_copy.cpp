// Incremental Copy Blob: a snapshot of a page blob copied to a destination page blob, which then
// takes a snapshot of its own holding that content. The destination is tied to its source blob:
// later copies must come from the same blob and from a snapshot no older than the last copied.
// The copy, the destination's snapshot and the properties naming it are one transaction.
#include "common/crypto/random_id.h"
#include "fake_storage/engine/blob_rows.h"
#include "fake_storage/engine/blob_store.h"
#include "fake_storage/engine/storage_error.h"

namespace bai::storage {

BlobInfo BlobStore::incremental_copy(const std::string& account, const std::string& container, const std::string& name,
                                     const std::string& source_account, const std::string& source_container,
                                     const std::string& source_name, const CopyRequest& request,
                                     const Conditions& conditions) {
    PublishOnReturn publish(changes_, account, container, name);
    if (request.source_snapshot.empty()) {
        fail(409, "IncrementalCopySourceMustBeSnapshot", "The source for incremental copy request must be a snapshot.");
    }
    OpenBlob source = open_copy_source(source_account, source_container, source_name, request.source_snapshot);
    const BlobInfo& from = source.info;
    if (from.type != BlobType::page) invalid_blob_type();
    check_source_conditions(request.source_conditions, Version{from.etag, from.last_modified, &from.tags});

    const std::string source_blob = source_account + "/" + source_container + "/" + source_name;
    BlobTraits traits;
    traits.type = BlobType::page;
    traits.sequence_number = from.sequence_number;
    traits.page_blob_size = from.size;
    traits.copy = {crypto::uuid4(), request.source_url, "success",
                   std::to_string(from.size) + "/" + std::to_string(from.size), time::now()};
    traits.copy.incremental = true;
    traits.copy.incremental_source = source_blob;
    traits.copy.source_snapshot = request.source_snapshot;
    traits.check = [&](db::Database&, const std::optional<BlobInfo>& existing) {
        if (!existing) return;
        if (!existing->copy.incremental) invalid_blob_type();
        if (existing->copy.incremental_source != source_blob) {
            fail(409, "IncrementalCopyBlobMismatch",
                 "The specified source blob is different than the copy source of the existing incremental copy blob.");
        }
        // Snapshot names are ISO 8601 times of one width: they sort as the times do.
        if (request.source_snapshot < existing->copy.source_snapshot) {
            fail(409, "IncrementalCopyOfEarlierVersionSnapshotNotAllowed",
                 "The specified snapshot is earlier than the last snapshot copied into the incremental copy blob.");
        }
    };

    // The destination and its new snapshot each get their own links of the copied runs.
    BlockLinks links(files_, account);
    BlockLinks snapshot_links(files_, account);
    try {
        const std::vector<PageRow> rows = copied_page_rows(account, source, source_account == account, links);
        std::vector<PageRow> snapshot_rows = rows;
        for (PageRow& p : snapshot_rows) {
            if (!p.content_id.empty()) p.content_id = snapshot_links.of(p.content_id);
        }
        traits.pages = &rows;
        traits.then = [&](db::Database& db, BlobInfo& blob) {
            const std::string id = insert_snapshot_row(db, account, blob, "", blob.metadata, {}, snapshot_rows);
            blob.copy.destination_snapshot = id;
            db.prepare("UPDATE blobs SET copy_state = ?4 WHERE account = ?1 AND container = ?2 AND name = ?3"
                       " AND snapshot IN ('', ?5)")
                .bind(1, account)
                .bind(2, container)
                .bind(3, name)
                .bind(4, copy_state_to_json(blob.copy))
                .bind(5, id)
                .run();
        };
        const std::string none;
        std::lock_guard lock(lock_for(account, container, name));
        return commit_body(account, container, name, "", from.size, from.content, from.metadata, conditions, nullptr,
                           &none, traits);
    } catch (...) {
        remove_contents(files_, account, links.made());
        remove_contents(files_, account, snapshot_links.made());
        throw;
    }
}

}  // namespace bai::storage
