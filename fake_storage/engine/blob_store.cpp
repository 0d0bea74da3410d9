#include "fake_storage/engine/blob_store.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <functional>
#include <map>
#include <set>
#include <utility>

#include "common/crypto/base64.h"
#include "common/crypto/random_id.h"
#include "fake_storage/engine/blob_rows.h"
#include "fake_storage/engine/storage_error.h"

namespace bai::storage {
using std::int64_t;

// SQL: the number of bytes a stored block id (base64) stands for.
constexpr std::string_view kBlockIdBytes =
    "(length(block_id) / 4 * 3 - (length(block_id) - length(rtrim(block_id, '='))))";

BlobPart::~BlobPart() {
    if (fd >= 0 && owns) ::close(fd);
}

BlobPart& BlobPart::operator=(BlobPart&& other) noexcept {
    if (this != &other) {
        if (fd >= 0 && owns) ::close(fd);
        fd = std::exchange(other.fd, -1);
        start = other.start;
        size = other.size;
        file_offset = other.file_offset;
        bytes = std::move(other.bytes);
        owns = other.owns;
    }
    return *this;
}

ssize_t OpenBlob::read(char* into, size_t size, std::uint64_t offset) const {
    if (in_memory()) {
        if (offset >= bytes.size()) return 0;
        size_t n = std::min<std::uint64_t>(size, bytes.size() - offset);
        std::memcpy(into, bytes.data() + offset, n);
        return static_cast<ssize_t>(n);
    }
    // The last part that starts at or before `offset`.
    auto part = std::upper_bound(parts.begin(), parts.end(), offset,
                                 [](std::uint64_t at, const BlobPart& p) { return at < p.start; });
    if (part == parts.begin()) return 0;
    --part;
    size_t done = 0;
    for (; part != parts.end() && done < size; ++part) {
        std::uint64_t within = offset + done - part->start;
        if (within >= part->size) continue;
        size_t want = std::min<std::uint64_t>(size - done, part->size - within);
        if (part->fd < 0) {  // in memory, or zeros
            if (part->bytes) {
                std::memcpy(into + done, part->bytes->data() + part->file_offset + within, want);
            } else {
                std::memset(into + done, 0, want);
            }
            done += want;
            continue;
        }
        within += part->file_offset;
        while (want > 0) {
            ssize_t n = ::pread(part->fd, into + done, want, static_cast<off_t>(within));
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) return -1;
            if (n == 0) {
                errno = EIO;  // a content file shorter than its metadata says
                return -1;
            }
            done += static_cast<size_t>(n);
            within += static_cast<std::uint64_t>(n);
            want -= static_cast<size_t>(n);
        }
    }
    // An append blob's tail, kept in memory after its parts.
    const std::uint64_t tail_start = info.size - bytes.size();
    if (done < size && !bytes.empty() && offset + done >= tail_start) {
        std::uint64_t within = offset + done - tail_start;
        if (within < bytes.size()) {
            size_t n = std::min<std::uint64_t>(size - done, bytes.size() - within);
            std::memcpy(into + done, bytes.data() + within, n);
            done += n;
        }
    }
    return static_cast<ssize_t>(done);
}

BlobStore::BlobStore(db::Database& db, ContentFiles& files) : db_(db), files_(files) {}

BlobStore::PublishOnReturn::PublishOnReturn(const StoreChanges& changes, const std::string& account,
                                            const std::string& container, const std::string& name)
    : changes_(changes), account_(account), container_(container), name_(name),
      exceptions_(std::uncaught_exceptions()) {}

BlobStore::PublishOnReturn::~PublishOnReturn() {
    if (std::uncaught_exceptions() > exceptions_) return;  // the call failed: nothing changed
    try {
        changes_.publish(account_, container_, name_);
    } catch (...) {  // (a listener that cannot queue: its mount's caches time out instead)
    }
}

std::mutex& BlobStore::lock_for(const std::string& account, const std::string& container,
                                const std::string& blob) {
    size_t h = std::hash<std::string>{}(account + '\n' + container + '\n' + blob);
    return blob_locks_[h % blob_locks_.size()];
}

void BlobStore::require_container(db::Database& db, const std::string& account,
                                  const std::string& container) {
    auto q = db.prepare("SELECT 1 FROM containers WHERE account = ?1 AND name = ?2");
    q.bind(1, account).bind(2, container);
    if (!q.step()) container_not_found();
}

ContainerInfo BlobStore::create_container(const std::string& account, const std::string& name,
                                          const Metadata& metadata,
                                          const std::string& public_access) {
    const std::string whole_container;
    PublishOnReturn publish(changes_, account, name, whole_container);
    ContainerInfo c{name, new_etag(), time::now(), {}, metadata, public_access};
    c.last_modified = c.created;
    write([&](db::Database& db) {
        if (find_container(db, account, name)) {
            fail(409, "ContainerAlreadyExists", "The specified container already exists.");
        }
        if (container_being_deleted(db, account, name)) {
            fail(409, "ContainerBeingDeleted", "The specified container is being deleted. Try operation later.");
        }
        db.prepare(
              "INSERT INTO containers(account, name, etag, created, last_modified, metadata,"
              " public_access) VALUES (?1, ?2, ?3, ?4, ?4, ?5, ?6)")
            .bind(1, account)
            .bind(2, name)
            .bind(3, c.etag)
            .bind(4, time::to_ticks(c.created))
            .bind(5, metadata_to_json(metadata))
            .bind(6, public_access)
            .run();
    });
    return c;
}

ContainerInfo BlobStore::get_container(const std::string& account, const std::string& name) {
    std::optional<ContainerInfo> c;
    db_.read([&](db::Database& db) { c = find_container(db, account, name); });
    if (!c) container_not_found();
    return *c;
}

void drop_container(db::Database& db, const std::string& account, const std::string& key,
                    std::vector<std::pair<ContentKind, std::string>>& garbage) {
    auto blobs = db.prepare("SELECT content_id FROM blobs WHERE account = ?1 AND container = ?2");
    blobs.bind(1, account).bind(2, key);
    while (blobs.step()) garbage.emplace_back(ContentKind::blob, blobs.column_text(0));
    auto parts = db.prepare(
        "SELECT c.content_id FROM committed_blocks c JOIN blobs b ON b.id = c.blob_id"
        " WHERE b.account = ?1 AND b.container = ?2 AND c.content_id <> ''");
    parts.bind(1, account).bind(2, key);
    while (parts.step()) garbage.emplace_back(ContentKind::block, parts.column_text(0));
    auto pages = db.prepare(
        "SELECT DISTINCT p.content_id FROM page_ranges p JOIN blobs b ON b.id = p.blob_id"
        " WHERE b.account = ?1 AND b.container = ?2 AND p.content_id <> ''");
    pages.bind(1, account).bind(2, key);
    while (pages.step()) garbage.emplace_back(ContentKind::block, pages.column_text(0));
    auto blocks = db.prepare(
        "SELECT content_id FROM uncommitted_blocks WHERE account = ?1 AND container = ?2");
    blocks.bind(1, account).bind(2, key);
    while (blocks.step()) garbage.emplace_back(ContentKind::block, blocks.column_text(0));
    for (const char* sql : {"DELETE FROM blobs WHERE account = ?1 AND container = ?2",
                            "DELETE FROM uncommitted_blocks WHERE account = ?1 AND container = ?2",
                            "DELETE FROM containers WHERE account = ?1 AND name = ?2"}) {
        db.prepare(sql).bind(1, account).bind(2, key).run();
    }
}

void BlobStore::delete_container(const std::string& account, const std::string& name,
                                 const Conditions& conditions, bool ignore_lease) {
    const std::string whole_container;
    PublishOnReturn publish(changes_, account, name, whole_container);
    std::vector<std::pair<ContentKind, std::string>> garbage;
    const bool keep = container_soft_delete_on(account);
    write([&](db::Database& db) {
        garbage.clear();
        auto c = find_container(db, account, name);
        // The service answers a container it is still deleting as deleted again.
        if (!c && container_being_deleted(db, account, name)) return;
        if (!c) container_not_found();
        check_write_conditions(conditions, Version{c->etag, c->last_modified}, "", "");
        if (!ignore_lease) check_lease_for_write(c->lease, conditions.lease_id, clock_now(), LeaseTarget::container);
        if (keep) {
            keep_container_as_deleted(db, account, name);
        } else {
            drop_container(db, account, name, garbage);
        }
    });
    remove_contents(files_, account, garbage);
}

ContainerInfo BlobStore::update_container(const std::string& account, const std::string& name,
                                          const Conditions& conditions,
                                          const std::function<void(ContainerInfo&)>& change) {
    ContainerInfo result;
    write([&](db::Database& db) {
        auto c = find_container(db, account, name);
        if (!c) container_not_found();
        check_write_conditions(conditions, Version{c->etag, c->last_modified}, "", "");
        // Set Container Metadata and ACL take a lease id if the caller gives one.
        check_lease_if_named(c->lease, conditions.lease_id, clock_now(), LeaseTarget::container);
        change(*c);
        c->etag = new_etag();
        c->last_modified = time::now();
        db.prepare("UPDATE containers SET metadata = ?3, public_access = ?4, etag = ?5,"
                   " last_modified = ?6, signed_identifiers = ?7 WHERE account = ?1 AND name = ?2")
            .bind(1, account)
            .bind(2, name)
            .bind(3, metadata_to_json(c->metadata))
            .bind(4, c->public_access)
            .bind(5, c->etag)
            .bind(6, time::to_ticks(c->last_modified))
            .bind(7, signed_identifiers_to_json(c->identifiers))
            .run();
        result = *c;
    });
    return result;
}

ContainerInfo BlobStore::set_container_metadata(const std::string& account,
                                                const std::string& name, const Metadata& metadata,
                                                const Conditions& conditions) {
    return update_container(account, name, conditions,
                            [&](ContainerInfo& c) { c.metadata = metadata; });
}

ContainerInfo BlobStore::set_container_access(const std::string& account, const std::string& name,
                                              const std::string& public_access,
                                              const std::vector<SignedIdentifier>& identifiers,
                                              const Conditions& conditions) {
    return update_container(account, name, conditions, [&](ContainerInfo& c) {
        c.public_access = public_access;
        c.identifiers = identifiers;
    });
}

BlobInfo BlobStore::commit_body(
    const std::string& account, const std::string& container, const std::string& name,
    const std::string& content_id, std::uint64_t size, const ContentSettings& content,
    const Metadata& metadata, const Conditions& conditions,
    const std::vector<CommittedBlock>* committed_blocks, const std::string* inline_body,
    const BlobTraits& traits) {
    BlobInfo blob;
    blob.container = container;
    blob.name = name;
    blob.content_id = content_id;
    blob.size = size;
    blob.etag = new_etag();
    blob.created = time::now();
    blob.last_modified = blob.created;
    blob.content = content;
    blob.metadata = metadata;
    // Composed: made of block files (an append blob's parts, with its tail inline after them).
    blob.composed = content_id.empty() && inline_body == nullptr;
    if (committed_blocks != nullptr) {
        for (const CommittedBlock& b : *committed_blocks) blob.composed = blob.composed || !b.content_id.empty();
    }
    blob.type = traits.type;
    blob.committed_block_count = traits.committed_block_count;
    blob.sealed = traits.sealed;
    blob.sequence_number = traits.sequence_number;
    blob.tier = traits.tier;
    blob.tier_changed = traits.tier.empty() ? time::TimePoint{} : blob.created;
    blob.tags = traits.tags;
    blob.copy = traits.copy;
    std::set<std::string> kept;  // block files the new blob is made of
    if (committed_blocks != nullptr) {
        for (const CommittedBlock& b : *committed_blocks) {
            if (!b.content_id.empty()) kept.insert(b.content_id);
        }
    }
    if (traits.pages != nullptr) {
        for (const PageRow& p : *traits.pages) {
            if (!p.content_id.empty()) kept.insert(p.content_id);
        }
    }
    if (traits.type == BlobType::page) blob.size = traits.page_blob_size;
    std::vector<std::pair<ContentKind, std::string>> garbage;
    auto discard_block = [&](std::string id) {
        if (!kept.contains(id)) garbage.emplace_back(ContentKind::block, std::move(id));
    };
    const bool versioned = versioning_enabled(account);
    std::vector<std::pair<ContentKind, std::string>> linked;  // a version's links of the old blob's files
    try {
        write([&](db::Database& db) {
            garbage.clear();
            remove_contents(files_, account, linked);  // a retried transaction's
            linked.clear();
            auto existing = find_blob(db, account, container, name);
            check_write_conditions(conditions, version_of(existing), "BlobAlreadyExists",
                                   "The specified blob already exists.");
            check_lease_for_write(existing ? existing->lease : Lease{}, conditions.lease_id, clock_now(), LeaseTarget::blob);
            blob.tier = traits.tier;
            blob.tier_changed = traits.tier.empty() ? time::TimePoint{} : blob.created;
            if (traits.tier.empty() && traits.type == BlobType::block && traits.copy.empty()) {
                // A block blob written with no tier keeps the online tier set on what it replaces
                // (the blob, or the latest version of a versioned blob deleted), as of this write:
                // recorded (Cool kept, with the write's time; an Archive one is not kept).
                const std::string before = existing ? existing->tier : latest_version_tier(db, account, container, name);
                if (!before.empty() && before != "Archive") {
                    blob.tier = before;
                    blob.tier_changed = blob.created;
                }
            }
            if (traits.check) {
                traits.check(db, existing);
            } else if (existing) {
                refuse_on_incremental_copy(*existing);
            }
            if (existing) {
                blob.created = existing->created;
                blob.lease = lease_after_write(existing->lease, clock_now());  // a new body keeps a held lease
                std::vector<std::string> parts = part_files(db, existing->row);
                // A blob with a version id keeps being versioned (its versions stay apart from
                // what replaces it) even once the setting is off.
                if (versioned || !existing->version_id.empty()) {
                    bool shared = false;  // blocks of the old blob committed again
                    for (const std::string& id : parts) shared = shared || kept.contains(id);
                    if (!shared) {
                        keep_row_as_version(db, account, *existing);  // its files go with it
                        parts.clear();
                    } else {
                        keep_copy_as_version(db, files_, account, *existing, linked);
                        garbage.emplace_back(ContentKind::blob, existing->content_id);
                    }
                } else {
                    garbage.emplace_back(ContentKind::blob, existing->content_id);
                }
                for (std::string& id : parts) discard_block(std::move(id));
            }
            blob.version_id = versioned ? new_version_id(db, account, blob) : "";
            auto upsert = db.prepare(
                  "INSERT INTO blobs(account, container, name, content_id, size, etag, created,"
                  " last_modified, content, metadata, inline_body, composed, lease, blob_type, block_count,"
                  " sealed, sequence_number, tier, tier_changed, archive_status, tags, copy_state, version_id)"
                  " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19,"
                  " '', ?20, ?21, ?22)"
                  " ON CONFLICT(account, container, name, snapshot) DO UPDATE SET content_id = excluded.content_id,"
                  " size = excluded.size, etag = excluded.etag, last_modified = excluded.last_modified,"
                  " content = excluded.content, metadata = excluded.metadata,"
                  " inline_body = excluded.inline_body, composed = excluded.composed, lease = excluded.lease,"
                  " blob_type = excluded.blob_type, block_count = excluded.block_count, sealed = excluded.sealed,"
                  " sequence_number = excluded.sequence_number, tier = excluded.tier,"
                  " tier_changed = excluded.tier_changed, archive_status = '', tags = excluded.tags,"
                  " copy_state = excluded.copy_state, version_id = excluded.version_id RETURNING id");
            upsert.bind(1, account)
                .bind(2, container)
                .bind(3, name)
                .bind(4, content_id)
                .bind(5, static_cast<int64_t>(blob.size))
                .bind(6, blob.etag)
                .bind(7, time::to_ticks(blob.created))
                .bind(8, time::to_ticks(blob.last_modified))
                .bind(9, encode_content_settings(content))
                .bind(10, metadata_to_json(metadata))
                .bind_null(11)
                .bind(12, int64_t{blob.composed ? 1 : 0})
                .bind(13, lease_to_json(blob.lease))
                .bind(14, blob_type_name(blob.type))
                .bind(15, static_cast<int64_t>(blob.committed_block_count))
                .bind(16, int64_t{blob.sealed ? 1 : 0})
                .bind(17, blob.sequence_number)
                .bind(18, blob.tier)
                .bind(19, blob.tier.empty() ? int64_t{0} : time::to_ticks(blob.tier_changed))
                .bind(20, tags_to_json(blob.tags))
                .bind(21, copy_state_to_json(blob.copy))
                .bind(22, blob.version_id);
            if (inline_body != nullptr) upsert.bind_blob(11, *inline_body);
            upsert.step();
            int64_t blob_id = upsert.column_int(0);
            blob.row = blob_id;
            db.prepare("DELETE FROM committed_blocks WHERE blob_id = ?1").bind(1, blob_id).run();
            db.prepare("DELETE FROM page_ranges WHERE blob_id = ?1").bind(1, blob_id).run();
            if (traits.pages != nullptr) insert_page_rows(db, blob_id, *traits.pages);
            if (committed_blocks != nullptr) insert_committed_blocks(db, blob_id, *committed_blocks);
            auto blocks = db.prepare(
                "SELECT content_id FROM uncommitted_blocks WHERE account = ?1 AND container = ?2"
                " AND blob = ?3");
            blocks.bind(1, account).bind(2, container).bind(3, name);
            while (blocks.step()) discard_block(blocks.column_text(0));
            db.prepare("DELETE FROM uncommitted_blocks WHERE account = ?1 AND container = ?2"
                       " AND blob = ?3")
                .bind(1, account)
                .bind(2, container)
                .bind(3, name)
                .run();
            if (traits.then) traits.then(db, blob);
        });
    } catch (...) {
        if (!content_id.empty()) files_.remove(account, ContentKind::blob, content_id);
        remove_contents(files_, account, linked);
        throw;
    }
    remove_contents(files_, account, garbage);
    return blob;
}

BlobInfo BlobStore::commit_writer(
    const std::string& account, const std::string& container, const std::string& name,
    ContentWriter& writer, const ContentSettings& content, const Metadata& metadata,
    const Conditions& conditions, const std::vector<CommittedBlock>* committed_blocks, const BlobTraits& traits) {
    if (writer.in_memory()) {
        std::lock_guard lock(lock_for(account, container, name));
        return commit_body(account, container, name, "", writer.size(), content, metadata,
                           conditions, committed_blocks, &writer.bytes(), traits);
    }
    std::string content_id = files_.commit(writer, account, ContentKind::blob);
    std::lock_guard lock(lock_for(account, container, name));
    return commit_body(account, container, name, content_id, writer.size(), content, metadata,
                       conditions, committed_blocks, nullptr, traits);
}

BlobInfo BlobStore::put_blob(const std::string& account, const std::string& container,
                             const std::string& name, ContentWriter& writer,
                             const ContentSettings& content, const Metadata& metadata,
                             const Conditions& conditions, const BlobTraits& traits) {
    PublishOnReturn publish(changes_, account, container, name);
    return commit_writer(account, container, name, writer, with_default_type(content), metadata, conditions, nullptr,
                         traits);
}

void BlobStore::put_block(const std::string& account, const std::string& container,
                          const std::string& blob, const std::string& block_id,
                          ContentWriter& writer, const std::optional<std::string>& lease_id) {
    check_block_id(block_id);
    if (writer.size() > kMaxBlockSize) {
        fail(413, "RequestBodyTooLarge", "The request body is too large and exceeds the maximum permissible limit.");
    }
    std::string content_id = files_.commit(writer, account, ContentKind::block);
    std::lock_guard lock(lock_for(account, container, blob));
    std::optional<std::string> replaced;
    try {
        write([&](db::Database& db) {
            // The container must exist (find_blob says so), and a leased blob takes blocks from
            // its lease's holder only.
            auto existing = find_blob(db, account, container, blob);
            check_lease_for_write(existing ? existing->lease : Lease{}, lease_id, clock_now(), LeaseTarget::blob);
            // Block ids compare by their decoded length (the length of the base64 text, less a
            // quarter, less its padding).
            auto q = db.prepare(
                "SELECT count(*), max(" + std::string(kBlockIdBytes) + "), min(" + std::string(kBlockIdBytes) + "),"
                " max(CASE WHEN block_id = ?4 THEN content_id END)"
                " FROM uncommitted_blocks WHERE account = ?1 AND container = ?2 AND blob = ?3");
            q.bind(1, account).bind(2, container).bind(3, blob).bind(4, block_id);
            q.step();
            int64_t count = q.column_int(0);
            const auto id_bytes = static_cast<int64_t>(crypto::base64_decode(block_id)->size());
            if (count > 0 && (q.column_int(1) != id_bytes || q.column_int(2) != id_bytes)) {
                fail(400, "InvalidBlobOrBlock",
                     "The specified blob or block content is invalid: all block ids of a blob "
                     "must have the same length.");
            }
            if (!q.is_null(3)) replaced = q.column_text(3);
            if (!replaced && count >= static_cast<int64_t>(kMaxUncommittedBlocks)) {
                fail(409, "BlockCountExceedsLimit",
                     "The uncommitted block count cannot exceed the maximum limit of 100,000 blocks.");
            }
            db.prepare(
                  "INSERT INTO uncommitted_blocks(account, container, blob, block_id, content_id,"
                  " size, created) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
                  " ON CONFLICT(account, container, blob, block_id) DO UPDATE SET"
                  " content_id = excluded.content_id, size = excluded.size, created = excluded.created")
                .bind(1, account)
                .bind(2, container)
                .bind(3, blob)
                .bind(4, block_id)
                .bind(5, content_id)
                .bind(6, static_cast<int64_t>(writer.size()))
                .bind(7, time::to_ticks(clock_()))
                .run();
        });
    } catch (...) {
        files_.remove(account, ContentKind::block, content_id);
        throw;
    }
    if (replaced) files_.remove(account, ContentKind::block, *replaced);
}

BlockLists BlobStore::get_block_lists(const std::string& account, const std::string& container,
                                      const std::string& blob, const std::string& snapshot) {
    BlockLists lists;
    db_.read([&](db::Database& db) {
        lists.blob = find_blob(db, account, container, blob, nullptr, snapshot);
        if (!snapshot.empty() && !lists.blob) blob_not_found();
        if (lists.blob && lists.blob->type == BlobType::block) {
            for (CommittedBlock& c : committed_blocks_of(db, lists.blob->row)) {
                lists.committed.push_back(std::move(c.block));
            }
        }
        if (!snapshot.empty()) return;
        auto uncommitted = db.prepare(
            "SELECT block_id, size FROM uncommitted_blocks WHERE account = ?1 AND container = ?2"
            " AND blob = ?3 ORDER BY created, block_id");
        uncommitted.bind(1, account).bind(2, container).bind(3, blob);
        while (uncommitted.step()) {
            lists.uncommitted.push_back(
                {uncommitted.column_text(0), static_cast<std::uint64_t>(uncommitted.column_int(1))});
        }
    });
    if (!lists.blob && lists.uncommitted.empty()) blob_not_found();
    return lists;
}

BlobInfo BlobStore::put_block_list(const std::string& account, const std::string& container,
                                   const std::string& blob, const std::vector<BlockRef>& blocks,
                                   const ContentSettings& given, const Metadata& metadata,
                                   const Conditions& conditions) {
    PublishOnReturn publish(changes_, account, container, blob);
    const ContentSettings content = with_default_type(given);
    if (blocks.size() > kMaxCommittedBlocks) {
        fail(400, "InvalidBlockList", "The block list may not contain more than 50,000 blocks.");
    }
    std::lock_guard lock(lock_for(account, container, blob));
    struct Source {
        ContentKind kind;
        std::string content_id;
        std::uint64_t offset;
        std::uint64_t size;
    };
    std::map<std::string, Source> uncommitted;
    std::map<std::string, Source> committed;
    std::optional<BlobInfo> current;
    std::string current_inline;  // the committed body, when it is stored inline
    db_.read([&](db::Database& db) {
        current = find_blob(db, account, container, blob, &current_inline);
        auto u = db.prepare(
            "SELECT block_id, content_id, size FROM uncommitted_blocks WHERE account = ?1"
            " AND container = ?2 AND blob = ?3");
        u.bind(1, account).bind(2, container).bind(3, blob);
        while (u.step()) {
            uncommitted[u.column_text(0)] = {ContentKind::block, u.column_text(1), 0,
                                             static_cast<std::uint64_t>(u.column_int(2))};
        }
        if (current) {
            for (CommittedBlock& c : committed_blocks_of(db, current->row)) {
                if (current->type != BlobType::block) break;  // an append blob's parts are not blocks
                // A composed blob's block is its own file; others are a run of the blob's content.
                Source source = c.content_id.empty()
                                    ? Source{ContentKind::blob, current->content_id, c.offset, c.block.size}
                                    : Source{ContentKind::block, c.content_id, 0, c.block.size};
                committed[c.block.id] = std::move(source);
            }
        }
    });
    // Validate the whole list before any bytes are copied.
    std::vector<const Source*> sources;
    for (const BlockRef& ref : blocks) {
        const Source* found = nullptr;
        if (ref.list != BlockListType::committed) {
            auto it = uncommitted.find(ref.id);
            if (it != uncommitted.end()) found = &it->second;
        }
        if (found == nullptr && ref.list != BlockListType::uncommitted) {
            auto it = committed.find(ref.id);
            if (it != committed.end()) found = &it->second;
        }
        if (found == nullptr) fail(400, "InvalidBlockList", "The specified block list is invalid.");
        sources.push_back(found);
    }
    if (current) {
        check_write_conditions(conditions, version_of(current), "BlobAlreadyExists",
                               "The specified blob already exists.");
    }
    std::uint64_t total = 0;
    bool all_block_files = true;
    for (const Source* source : sources) {
        total += source->size;
        all_block_files = all_block_files && source->kind == ContentKind::block;
    }
    std::vector<CommittedBlock> layout;
    if (all_block_files && total > kInlineLimit && sources.size() <= kMaxBlobParts &&
        total >= sources.size() * kInlineLimit) {
        // The staged blocks become the blob as they are: nothing is copied.
        std::uint64_t offset = 0;
        for (size_t i = 0; i < blocks.size(); ++i) {
            layout.push_back({{blocks[i].id, sources[i]->size}, offset, sources[i]->content_id});
            offset += sources[i]->size;
        }
        return commit_body(account, container, blob, "", total, content, metadata, conditions,
                           &layout, nullptr);
    }
    auto writer = files_.begin(false);
    FdCloser open_files;
    std::map<std::pair<ContentKind, std::string>, int> fds;
    for (size_t i = 0; i < blocks.size(); ++i) {
        const Source& s = *sources[i];
        layout.push_back({{blocks[i].id, s.size}, writer->size(), ""});
        if (s.content_id.empty()) {
            writer->append(std::string_view(current_inline).substr(s.offset, s.size));
            continue;
        }
        auto key = std::make_pair(s.kind, s.content_id);
        auto it = fds.find(key);
        if (it == fds.end()) {
            int fd = files_.open(account, s.kind, s.content_id);
            if (fd < 0) fail(400, "InvalidBlockList", "The specified block list is invalid.");
            open_files.fds.push_back(fd);
            it = fds.emplace(key, fd).first;
        }
        writer->append_from(it->second, s.offset, s.size);
    }
    if (writer->in_memory()) {
        return commit_body(account, container, blob, "", writer->size(), content, metadata,
                           conditions, &layout, &writer->bytes());
    }
    std::string content_id = files_.commit(*writer, account, ContentKind::blob);
    return commit_body(account, container, blob, content_id, writer->size(), content, metadata,
                       conditions, &layout, nullptr);
}

BlobInfo BlobStore::get_blob(const std::string& account, const std::string& container,
                             const std::string& name, const std::string& snapshot) {
    std::optional<BlobInfo> blob;
    db_.read([&](db::Database& db) {
        blob = find_blob(db, account, container, name, nullptr, snapshot);
    });
    if (!blob) blob_not_found();
    return *blob;
}

void BlobStore::write(const std::function<void(db::Database&)>& change) {
    db_.transaction([&](db::Database& db) {
        read_cache_.clear();
        read_cache_bytes_ = 0;
        change(db);
    });
}

OpenBlob BlobStore::open(const std::string& account, const std::string& container,
                         const std::string& name, std::vector<CommittedBlock>* blocks,
                         const std::string& snapshot) {
    // The content files of what we read may be replaced and removed before we open them: retry.
    for (int attempt = 0; attempt < 8; ++attempt) {
        OpenBlob open;
        std::vector<CommittedBlock> committed;
        std::vector<PageRow> pages;
        bool found = false;
        db_.read([&](db::Database& db) {
            std::string key = account + '/' + container + '\n' + name + '\n' + snapshot;
            if (auto hit = read_cache_.find(key); hit != read_cache_.end() && blocks == nullptr) {
                found = true;
                open.info = hit->second.info;
                open.bytes = hit->second.bytes;
                committed = hit->second.committed;
                pages = hit->second.pages;
                return;
            }
            auto blob = find_blob(db, account, container, name, &open.bytes, snapshot);
            if (!blob) return;
            found = true;
            open.info = std::move(*blob);
            if (open.info.composed || blocks != nullptr) committed = committed_blocks_of(db, open.info.row);
            if (open.info.type == BlobType::page) pages = page_rows_of(db, open.info.row);
            size_t cached = open.bytes.size();  // the bytes the entry holds
            for (const PageRow& p : pages) cached += p.data.size();
            if (read_cache_.size() >= kReadCacheEntries || read_cache_bytes_ + cached > kReadCacheBytes) {
                read_cache_.clear();
                read_cache_bytes_ = 0;
            }
            read_cache_bytes_ += cached;
            read_cache_.insert_or_assign(std::move(key), CachedRead{open.info, open.bytes, committed, pages});
        });
        if (!found) blob_not_found();
        bool complete = true;
        if (open.info.type == BlobType::page) {
            complete = open_pages(account, open, pages);
        } else if (open.info.composed) {
            for (const CommittedBlock& b : committed) {
                if (b.block.size == 0) continue;
                int fd = files_.open(account, ContentKind::block, b.content_id);
                if (fd < 0) {
                    complete = false;
                    break;
                }
                open.parts.emplace_back(fd, b.offset, b.block.size);
            }
        } else if (!open.info.content_id.empty()) {
            int fd = files_.open(account, ContentKind::blob, open.info.content_id);
            if (fd >= 0) {
                open.parts.emplace_back(fd, 0, open.info.size);
            } else {
                complete = false;
            }
        }
        if (!complete) continue;
        if (blocks != nullptr) *blocks = std::move(committed);
        return open;
    }
    throw std::runtime_error("the content of blob " + container + "/" + name + " is missing");
}

BlobInfo BlobStore::update_blob(const std::string& account, const std::string& container,
                                const std::string& name, const Conditions& conditions,
                                const std::function<void(BlobInfo&)>& change, const std::string& snapshot,
                                bool same_version, bool new_version) {
    BlobInfo blob;
    const bool versioned = new_version && versioning_enabled(account);
    std::vector<std::pair<ContentKind, std::string>> linked;
    try {
    write([&](db::Database& db) {
        remove_contents(files_, account, linked);  // a retried transaction's
        linked.clear();
        blob = require_blob(db, account, container, name, snapshot);
        check_write_conditions(conditions, version_of(blob), "", "");
        if (snapshot.empty()) check_lease_for_write(blob.lease, conditions.lease_id, clock_now(), LeaseTarget::blob);
        if (!same_version) refuse_on_incremental_copy(blob);
        if (new_version && blob.snapshot.empty() && (versioned || !blob.version_id.empty())) {
            keep_copy_as_version(db, files_, account, blob, linked);
            blob.version_id = versioned ? new_version_id(db, account, blob) : "";
        }
        change(blob);
        if (!same_version) {
            blob.etag = new_etag();
            blob.last_modified = time::now();
            blob.lease = lease_after_write(blob.lease, clock_now());
        }
        db.prepare("UPDATE blobs SET content = ?2, metadata = ?3, etag = ?4, last_modified = ?5, lease = ?6,"
                   " tags = ?7, tier = ?8, tier_changed = ?9, archive_status = ?10, sealed = ?11,"
                   " sequence_number = ?12, version_id = ?13 WHERE id = ?1")
            .bind(1, blob.row)
            .bind(2, encode_content_settings(blob.content))
            .bind(3, metadata_to_json(blob.metadata))
            .bind(4, blob.etag)
            .bind(5, time::to_ticks(blob.last_modified))
            .bind(6, lease_to_json(blob.lease))
            .bind(7, tags_to_json(blob.tags))
            .bind(8, blob.tier)
            .bind(9, blob.tier.empty() ? int64_t{0} : time::to_ticks(blob.tier_changed))
            .bind(10, blob.archive_status)
            .bind(11, int64_t{blob.sealed ? 1 : 0})
            .bind(12, blob.sequence_number)
            .bind(13, blob.version_id)
            .run();
    });
    } catch (...) {
        remove_contents(files_, account, linked);
        throw;
    }
    return blob;
}

BlobInfo BlobStore::set_blob_content(const std::string& account, const std::string& container,
                                     const std::string& name, const ContentSettings& content,
                                     const Conditions& conditions) {
    PublishOnReturn publish(changes_, account, container, name);
    return update_blob(account, container, name, conditions,
                       [&](BlobInfo& blob) { blob.content = content; });
}

BlobInfo BlobStore::set_blob_metadata(const std::string& account, const std::string& container,
                                      const std::string& name, const Metadata& metadata,
                                      const Conditions& conditions) {
    PublishOnReturn publish(changes_, account, container, name);
    std::lock_guard lock(lock_for(account, container, name));
    return update_blob(account, container, name, conditions, [&](BlobInfo& blob) { blob.metadata = metadata; }, "",
                       false, /*new_version=*/true);
}

void BlobStore::delete_blob(const std::string& account, const std::string& container,
                            const std::string& name, const Conditions& conditions,
                            DeleteSnapshots snapshots, const std::string& snapshot) {
    PublishOnReturn publish(changes_, account, container, name);
    std::lock_guard lock(lock_for(account, container, name));
    std::vector<std::pair<ContentKind, std::string>> garbage;
    const bool versioned = versioning_enabled(account);
    const bool soft = delete_retention_days(account) > 0;
    write([&](db::Database& db) {
        BlobInfo blob = require_blob(db, account, container, name, snapshot);
        check_write_conditions(conditions, version_of(blob), "", "");
        if (snapshot.empty()) check_lease_for_write(blob.lease, conditions.lease_id, clock_now(), LeaseTarget::blob);
        // The rows to delete: the snapshot named, or the blob and (include) its snapshots, or
        // (only) its snapshots alone.
        std::vector<BlobInfo> going;
        if (!snapshot.empty()) {
            going.push_back(blob);
        } else {
            auto q = db.prepare(std::string("SELECT ") + kBlobColumns +
                                " FROM blobs WHERE account = ?1 AND container = ?2 AND name = ?3 AND snapshot <> ''"
                                " AND substr(snapshot, 1, 1) NOT IN ('@', '!')");
            q.bind(1, account).bind(2, container).bind(3, name);
            while (q.step()) going.push_back(read_blob(q));
            if (!going.empty() && snapshots == DeleteSnapshots::none) {
                fail(409, "SnapshotsPresent", "This operation is not permitted because the blob has snapshots.");
            }
            if (snapshots != DeleteSnapshots::only) going.push_back(blob);
        }
        // A versioned blob deleted leaves its current version as a previous version.
        if (snapshot.empty() && snapshots != DeleteSnapshots::only && (versioned || !blob.version_id.empty())) {
            going.pop_back();
            keep_row_as_version(db, account, blob);
        }
        auto remove = db.prepare("DELETE FROM blobs WHERE id = ?1");
        if (soft) {
            // Kept, keyed as deleted now (versions go for good: versioning keeps them already).
            std::erase_if(going, [&](const BlobInfo& row) {
                if (row.is_previous_version()) return false;
                keep_as_deleted(db, row);
                return true;
            });
        }
        for (const BlobInfo& row : going) {
            garbage.emplace_back(ContentKind::blob, row.content_id);
            for (std::string& id : part_files(db, row.row)) garbage.emplace_back(ContentKind::block, std::move(id));
            remove.bind(1, row.row).run();
        }
        if (snapshot.empty() && snapshots != DeleteSnapshots::only) {
            auto blocks = db.prepare(
                "SELECT content_id FROM uncommitted_blocks WHERE account = ?1 AND container = ?2"
                " AND blob = ?3");
            blocks.bind(1, account).bind(2, container).bind(3, name);
            while (blocks.step()) garbage.emplace_back(ContentKind::block, blocks.column_text(0));
            db.prepare("DELETE FROM uncommitted_blocks WHERE account = ?1 AND container = ?2 AND blob = ?3")
                .bind(1, account)
                .bind(2, container)
                .bind(3, name)
                .run();
        }
    });
    remove_contents(files_, account, garbage);
}

std::pair<LeaseOutcome, ContainerInfo> BlobStore::lease_container(const std::string& account, const std::string& name,
                                                                  const LeaseRequest& request,
                                                                  const Conditions& conditions) {
    std::pair<LeaseOutcome, ContainerInfo> out;
    const std::string new_id = crypto::uuid4();
    write([&](db::Database& db) {
        auto c = find_container(db, account, name);
        if (!c) container_not_found();
        check_write_conditions(conditions, Version{c->etag, c->last_modified}, "", "");
        out.first = apply_lease(c->lease, request, clock_now(), new_id);
        c->lease = out.first.lease;
        db.prepare("UPDATE containers SET lease = ?3 WHERE account = ?1 AND name = ?2")
            .bind(1, account)
            .bind(2, name)
            .bind(3, lease_to_json(c->lease))
            .run();
        out.second = *c;
    });
    return out;
}

std::pair<LeaseOutcome, BlobInfo> BlobStore::lease_blob(const std::string& account, const std::string& container,
                                                        const std::string& name, const LeaseRequest& request,
                                                        const Conditions& conditions) {
    std::pair<LeaseOutcome, BlobInfo> out;
    const std::string new_id = crypto::uuid4();
    write([&](db::Database& db) {
        BlobInfo blob = require_blob(db, account, container, name);
        check_write_conditions(conditions, version_of(blob), "", "");
        out.first = apply_lease(blob.lease, request, clock_now(), new_id);
        blob.lease = out.first.lease;
        db.prepare("UPDATE blobs SET lease = ?2 WHERE id = ?1").bind(1, blob.row).bind(2, lease_to_json(blob.lease)).run();
        out.second = blob;
    });
    return out;
}

std::vector<std::string> BlobStore::live_content_ids() {
    std::vector<std::string> ids;
    db_.read([&](db::Database& db) {
        auto q = db.prepare("SELECT content_id FROM blobs WHERE content_id <> ''"
                            " UNION ALL SELECT content_id FROM uncommitted_blocks"
                            " UNION ALL SELECT content_id FROM committed_blocks WHERE content_id <> ''"
                            " UNION ALL SELECT content_id FROM page_ranges WHERE content_id <> ''");
        while (q.step()) ids.push_back(q.column_text(0));
    });
    return ids;
}

}  // namespace bai::storage
