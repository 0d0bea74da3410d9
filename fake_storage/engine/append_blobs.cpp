// Append blobs: Append Block and Seal.
//
// An append blob's bytes are its parts (immutable block files, rows of committed_blocks) followed
// by a tail kept inline in its row while it is small. An Append Block adds to the tail, a few
// kilobytes rewritten in one SQLite row, until tail and block pass kInlineLimit; then they become
// a new part. Parts merge like a binary counter (a part no larger than the one after it absorbs
// it), so a blob of n bytes has O(log n) parts and each byte is rewritten O(log n) times. Every
// Append Block is one transaction: a kill -9 leaves the blob as before or after it, and a part
// file written for a block that did not commit is swept at the next start.
#include <algorithm>

#include "fake_storage/engine/blob_rows.h"
#include "fake_storage/engine/blob_store.h"
#include "fake_storage/engine/storage_error.h"

namespace bai::storage {
namespace {

using std::int64_t;

constexpr std::uint64_t kMaxAppendBlocks = 50000;

struct Part {
    std::string content_id;
    std::uint64_t size = 0;
};

}  // namespace

std::pair<BlobInfo, std::uint64_t> BlobStore::append_block(const std::string& account, const std::string& container,
                                                           const std::string& name, ContentWriter& writer,
                                                           const Conditions& conditions,
                                                           const AppendConditions& append) {
    PublishOnReturn publish(changes_, account, container, name);
    if (writer.size() == 0) {
        fail(400, "InvalidHeaderValue",
             "The value for one of the HTTP headers is not in the correct format.\nHeaderName:Content-Length\nHeaderValue:0");
    }
    if (writer.size() > kMaxAppendBlockSize) {
        fail(413, "RequestBodyTooLarge", "The request body is too large and exceeds the maximum permissible limit.");
    }
    std::lock_guard lock(lock_for(account, container, name));
    // What the blob is made of now (only this lock's holder changes its parts and tail).
    std::optional<BlobInfo> current;
    std::string tail;
    std::vector<Part> parts;
    db_.read([&](db::Database& db) {
        current = find_blob(db, account, container, name, &tail);
        if (!current) return;
        for (CommittedBlock& b : committed_blocks_of(db, current->row)) parts.push_back({std::move(b.content_id), b.block.size});
    });
    auto check = [&](const BlobInfo& blob) {
        if (blob.type != BlobType::append) invalid_blob_type();
        check_write_conditions(conditions, version_of(blob), "", "");
        check_lease_for_write(blob.lease, conditions.lease_id, clock_now(), LeaseTarget::blob);
        if (blob.sealed) {
            fail(409, "BlobIsSealed",
                 "The specified blob is sealed, and its contents can't be modified unless the blob is re-created "
                 "after a delete.");
        }
        if (append.max_size && blob.size + writer.size() > *append.max_size) {
            fail(412, "MaxBlobSizeConditionNotMet", "The max blob size condition specified was not met.");
        }
        if (append.append_position && blob.size != *append.append_position) {
            fail(412, "AppendPositionConditionNotMet", "The append position condition specified was not met.");
        }
        if (blob.committed_block_count >= kMaxAppendBlocks) {
            fail(409, "BlockCountExceedsLimit", "The committed block count cannot exceed the maximum limit of 50,000 blocks.");
        }
    };
    if (!current) blob_not_found();
    check(*current);  // before any file is written

    // The new layout: the tail grows, or tail and block become a part and parts merge.
    std::vector<std::pair<ContentKind, std::string>> created;  // removed if the commit fails
    const std::vector<Part> before = parts;
    std::string new_tail;
    try {
        if (tail.size() + writer.size() <= kInlineLimit && writer.in_memory()) {
            new_tail = tail + writer.bytes();
        } else {
            std::string part_id;
            if (tail.empty()) {
                part_id = files_.commit(writer, account, ContentKind::block);
            } else {
                auto joined = files_.begin(false);
                joined->append(tail);
                if (writer.in_memory()) {
                    joined->append(writer.bytes());
                } else {
                    std::string block_id = files_.commit(writer, account, ContentKind::block);
                    created.emplace_back(ContentKind::block, block_id);
                    FdCloser block;
                    block.fds.push_back(files_.open(account, ContentKind::block, block_id));
                    if (block.fds.back() < 0) throw std::runtime_error("an appended block's file is missing");
                    joined->append_from(block.fds.back(), 0, writer.size());
                }
                part_id = files_.commit(*joined, account, ContentKind::block);
            }
            created.emplace_back(ContentKind::block, part_id);
            parts.push_back({part_id, tail.size() + writer.size()});
            while (parts.size() >= 2 && parts[parts.size() - 2].size <= parts.back().size) {
                auto merged = files_.begin(false);
                FdCloser open_files;
                for (size_t i = parts.size() - 2; i < parts.size(); ++i) {
                    int fd = files_.open(account, ContentKind::block, parts[i].content_id);
                    if (fd < 0) throw std::runtime_error("an append blob's part file is missing");
                    open_files.fds.push_back(fd);
                    merged->append_from(fd, 0, parts[i].size);
                }
                Part joined{files_.commit(*merged, account, ContentKind::block), parts[parts.size() - 2].size + parts.back().size};
                created.emplace_back(ContentKind::block, joined.content_id);
                parts.resize(parts.size() - 2);
                parts.push_back(std::move(joined));
            }
        }
    } catch (...) {
        remove_contents(files_, account, created);
        throw;
    }
    // Once the commit succeeds, the files no part names are garbage: old parts merged away, and
    // files written along the way and merged again.
    auto live = [&](const std::string& id) {
        return std::any_of(parts.begin(), parts.end(), [&](const Part& p) { return p.content_id == id; });
    };
    std::vector<std::pair<ContentKind, std::string>> garbage;
    for (const Part& p : before) {
        if (!live(p.content_id)) garbage.emplace_back(ContentKind::block, p.content_id);
    }
    for (const auto& file : created) {
        if (!live(file.second)) garbage.push_back(file);
    }

    BlobInfo blob;
    const std::uint64_t offset = current->size;
    try {
        write([&](db::Database& db) {
            blob = require_blob(db, account, container, name);
            if (blob.row != current->row) blob_not_found();  // replaced meanwhile (it cannot be, under the lock)
            check(blob);
            blob.size += writer.size();
            blob.committed_block_count += 1;
            blob.etag = new_etag();
            blob.last_modified = time::now();
            blob.lease = lease_after_write(blob.lease, clock_now());
            blob.composed = !parts.empty();
            db.prepare("UPDATE blobs SET size = ?2, inline_body = ?3, composed = ?4, block_count = ?5, etag = ?6,"
                       " last_modified = ?7, lease = ?8 WHERE id = ?1")
                .bind(1, blob.row)
                .bind(2, static_cast<int64_t>(blob.size))
                .bind_blob(3, new_tail)
                .bind(4, int64_t{blob.composed ? 1 : 0})
                .bind(5, static_cast<int64_t>(blob.committed_block_count))
                .bind(6, blob.etag)
                .bind(7, time::to_ticks(blob.last_modified))
                .bind(8, lease_to_json(blob.lease))
                .run();
            if (created.empty()) return;  // the parts are as they were
            db.prepare("DELETE FROM committed_blocks WHERE blob_id = ?1").bind(1, blob.row).run();
            std::vector<CommittedBlock> rows;  // the parts, as committed blocks without ids
            std::uint64_t at = 0;
            for (const Part& part : parts) {
                rows.push_back({{"", part.size}, at, part.content_id});
                at += part.size;
            }
            insert_committed_blocks(db, blob.row, rows);
        });
    } catch (...) {
        remove_contents(files_, account, created);
        throw;
    }
    remove_contents(files_, account, garbage);
    return {blob, offset};
}

BlobInfo BlobStore::seal_blob(const std::string& account, const std::string& container, const std::string& name,
                              const Conditions& conditions) {
    PublishOnReturn publish(changes_, account, container, name);
    std::lock_guard lock(lock_for(account, container, name));
    return update_blob(account, container, name, conditions, [](BlobInfo& blob) {
        if (blob.type != BlobType::append) invalid_blob_type();
        // Azurite refuses a second seal; the service's documentation does not say (a choice).
        if (blob.sealed) fail(409, "BlobAlreadySealed", "The blob is already sealed.");
        blob.sealed = true;
    });
}

}  // namespace bai::storage
