// Copies of whole blobs within the emulator (Copy Blob and the From URL copies): within an
// account the copy shares the source's content files through hard links (content is immutable
// once committed); into another account the bytes are written anew.
#include "common/crypto/random_id.h"
#include "fake_storage/engine/blob_rows.h"
#include "fake_storage/engine/blob_store.h"
#include "fake_storage/engine/storage_error.h"

namespace bai::storage {

OpenBlob BlobStore::open_copy_source(const std::string& account, const std::string& container, const std::string& name,
                                     const std::string& snapshot, std::vector<CommittedBlock>* blocks) {
    try {
        return open(account, container, name, blocks, snapshot);
    } catch (const StorageError& e) {
        if (e.status() == 404) fail(404, "CannotVerifyCopySource", "The specified blob does not exist.");
        throw;
    }
}

BlobInfo BlobStore::copy_blob(const std::string& account, const std::string& container,
                              const std::string& name, const std::string& source_account,
                              const std::string& source_container, const std::string& source_name,
                              const CopyRequest& request, const Conditions& conditions) {
    PublishOnReturn publish(changes_, account, container, name);
    std::vector<CommittedBlock> blocks;  // the copy keeps the source's committed block list
    OpenBlob source = open_copy_source(source_account, source_container, source_name, request.source_snapshot, &blocks);
    const BlobInfo& from = source.info;
    check_source_conditions(request.source_conditions, Version{from.etag, from.last_modified, &from.tags});
    // An archived source is copied only into an online tier (a rehydrating copy).
    if (from.tier == "Archive" && (request.tier.empty() || request.tier == "Archive")) {
        fail(409, "CannotVerifyCopySource", "This operation is not permitted on an archived blob.");
    }
    const Metadata& copied_metadata = request.metadata.value_or(from.metadata);
    BlobTraits traits;
    traits.type = from.type;
    traits.tags = request.source_tags ? from.tags : request.tags;
    traits.tier = request.tier;
    traits.sequence_number = from.sequence_number;
    traits.committed_block_count = from.committed_block_count;
    traits.sealed = from.sealed;
    if (request.records_copy) {
        traits.copy = {crypto::uuid4(), request.source_url, "success",
                       std::to_string(from.size) + "/" + std::to_string(from.size), time::now()};
    }
    if (from.type == BlobType::page) return copy_page_blob(account, container, name, source, copied_metadata, traits,
                                                           conditions, source_account == account);
    if (source.in_memory()) {
        // All the bytes are in memory: the copy keeps them inline, and no part file.
        for (CommittedBlock& b : blocks) b.content_id.clear();
        if (from.type != BlobType::block) blocks.clear();
        std::lock_guard lock(lock_for(account, container, name));
        return commit_body(account, container, name, "", from.size, from.content, copied_metadata,
                           conditions, &blocks, &source.bytes, traits);
    }
    // The bytes of the descriptors opened, in one new file (then no block has a file of its own).
    auto copy_into_one_file = [&] {
        auto writer = files_.begin(false);
        for (const BlobPart& part : source.parts) append_part(*writer, part);
        writer->append(source.bytes);
        for (CommittedBlock& b : blocks) b.content_id.clear();
        if (from.type != BlobType::block) blocks.clear();
        return files_.commit(*writer, account, ContentKind::blob);
    };
    // Content is immutable once committed: within an account the copy shares the files.
    BlockLinks links(files_, account);
    std::vector<std::pair<ContentKind, std::string>>& linked = links.made();
    std::string content_id;
    if (source_account != account) {
        content_id = copy_into_one_file();
    } else {
        try {
            if (from.composed) {
                for (CommittedBlock& b : blocks) b.content_id = links.of(b.content_id);
            } else {
                content_id = files_.link(account, ContentKind::blob, from.content_id);
            }
        } catch (const std::exception&) {
            // The source was replaced since it was opened and its files are gone: the
            // descriptors still read the version opened.
            remove_contents(files_, account, linked);
            linked.clear();
            content_id = copy_into_one_file();
        }
    }
    std::lock_guard lock(lock_for(account, container, name));
    try {
        // A composed append blob's tail stays inline after its linked parts.
        const bool with_tail = from.composed && content_id.empty() && !linked.empty();
        return commit_body(account, container, name, content_id, from.size, from.content,
                           copied_metadata, conditions, &blocks, with_tail ? &source.bytes : nullptr, traits);
    } catch (...) {
        remove_contents(files_, account, linked);
        throw;
    }
}

std::vector<PageRow> BlobStore::copied_page_rows(const std::string& account, const OpenBlob& source,
                                                 bool same_account, BlockLinks& links) {
    std::vector<PageRow> rows;
    std::vector<std::pair<ContentKind, std::string>>& created = links.made();
    bool linked_all = same_account;
    if (same_account) {
        db_.read([&](db::Database& db) { rows = page_rows_of(db, source.info.row); });
        try {
            for (PageRow& p : rows) {
                if (!p.content_id.empty()) p.content_id = links.of(p.content_id);
            }
        } catch (const std::exception&) {
            linked_all = false;  // replaced since it was opened: copy from the descriptors
        }
    }
    if (!linked_all) {
        remove_contents(files_, account, created);
        created.clear();
        rows = write_runs_into_one_file(files_, account, source);
        if (!rows.empty()) created.emplace_back(ContentKind::block, rows.front().content_id);
    }
    return rows;
}

// A page blob's copy: its runs, sharing their files within the account (hard links); into
// another account, its written runs in one new file.
BlobInfo BlobStore::copy_page_blob(const std::string& account, const std::string& container, const std::string& name,
                                   const OpenBlob& source, const Metadata& metadata, BlobTraits traits,
                                   const Conditions& conditions, bool same_account) {
    BlockLinks links(files_, account);
    try {
        const std::vector<PageRow> rows = copied_page_rows(account, source, same_account, links);
        traits.pages = &rows;
        traits.page_blob_size = source.info.size;
        const std::string none;
        std::lock_guard lock(lock_for(account, container, name));
        return commit_body(account, container, name, "", source.info.size, source.info.content, metadata, conditions,
                           nullptr, &none, traits);
    } catch (...) {
        remove_contents(files_, account, links.made());
        throw;
    }
}

}  // namespace bai::storage
