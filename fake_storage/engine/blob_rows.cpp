// The rows of containers and blobs in state.db, read and written by the BlobStore's files.
#include "fake_storage/engine/blob_rows.h"

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "common/crypto/base64.h"
#include "fake_storage/engine/storage_error.h"

namespace bai::storage {

using std::int64_t;

BlobInfo read_blob(db::Statement& q) {
    BlobInfo b;
    b.container = q.column_text(0);
    b.name = q.column_text(1);
    b.content_id = q.column_text(2);
    b.size = static_cast<std::uint64_t>(q.column_int(3));
    b.etag = q.column_text(4);
    b.created = time::from_ticks(q.column_int(5));
    b.last_modified = time::from_ticks(q.column_int(6));
    b.content = decode_content_settings(q.column_text(7));
    b.metadata = metadata_from_json(q.column_text(8));
    b.composed = q.column_int(9) != 0;
    b.lease = lease_from_json(q.column_text(10));
    b.snapshot = q.column_text(11);
    b.type = blob_type_from_name(q.column_text(12)).value_or(BlobType::block);
    b.committed_block_count = static_cast<std::uint64_t>(q.column_int(13));
    b.sealed = q.column_int(14) != 0;
    b.sequence_number = q.column_int(15);
    b.tier = q.column_text(16);
    b.tier_changed = time::from_ticks(q.column_int(17));
    b.archive_status = q.column_text(18);
    b.tags = tags_from_json(q.column_text(19));
    b.copy = copy_state_from_json(q.column_text(20));
    b.row = q.column_int(21);
    b.version_id = q.column_text(22);
    return b;
}

BlobInfo read_blob_brief(db::Statement& q) {
    BlobInfo b;
    b.container = q.column_text(0);
    b.name = q.column_text(1);
    b.size = static_cast<std::uint64_t>(q.column_int(3));
    b.created = time::from_ticks(q.column_int(5));
    b.last_modified = time::from_ticks(q.column_int(6));
    if (b.size == 0) b.metadata = metadata_from_json(q.column_text(8));
    return b;
}

// A blob written without a content type gets the service's default; Set Blob Properties
// without one clears it (the stored type is then empty).
ContentSettings with_default_type(ContentSettings content) {
    if (content.content_type.empty()) content.content_type = "application/octet-stream";
    return content;
}

[[noreturn]] void container_not_found() {
    fail(404, "ContainerNotFound", "The specified container does not exist.");
}

// The blob (or one of its snapshots), or nullopt; ContainerNotFound when its container does not
// exist (one statement: it is the whole read of a GET). With `inline_body`, also reads the bytes
// of a blob stored inline.
std::optional<BlobInfo> find_blob(db::Database& db, const std::string& account,
                                  const std::string& container, const std::string& name,
                                  std::string* inline_body, const std::string& snapshot) {
    // A version's key names a previous version's row, or the blob itself when it is the current
    // version's (only then the second lookup: a plain read stays one index search).
    const bool version = !snapshot.empty() && snapshot.front() == '@';
    auto q = db.prepare(std::string("SELECT ") + kBlobColumnsOfB +
                        (inline_body != nullptr ? ", b.inline_body" : "") +
                        " FROM containers c LEFT JOIN blobs b ON b.account = c.account"
                        " AND b.container = c.name AND b.name = ?3 AND " +
                        (version ? "(b.snapshot = ?4 OR (b.snapshot = '' AND '@' || b.version_id = ?4))" : "b.snapshot = ?4") +
                        " WHERE c.account = ?1 AND c.name = ?2");
    q.bind(1, account).bind(2, container).bind(3, name).bind(4, snapshot);
    if (!q.step()) container_not_found();
    if (q.is_null(1)) return std::nullopt;
    if (inline_body != nullptr) *inline_body = q.column_text(kBlobColumnCount);
    return read_blob(q);
}

ContainerInfo read_container(db::Statement& q) {
    ContainerInfo c;
    c.name = q.column_text(0);
    c.etag = q.column_text(1);
    c.created = time::from_ticks(q.column_int(2));
    c.last_modified = time::from_ticks(q.column_int(3));
    c.metadata = metadata_from_json(q.column_text(4));
    c.public_access = q.column_text(5);
    c.lease = lease_from_json(q.column_text(6));
    c.identifiers = signed_identifiers_from_json(q.column_text(7));
    return c;
}

std::optional<ContainerInfo> find_container(db::Database& db, const std::string& account,
                                            const std::string& name) {
    auto q = db.prepare(
        "SELECT name, etag, created, last_modified, metadata, public_access, lease, signed_identifiers FROM containers"
        " WHERE account = ?1 AND name = ?2");
    q.bind(1, account).bind(2, name);
    if (!q.step()) return std::nullopt;
    return read_container(q);
}

[[noreturn]] void invalid_blob_type() {
    fail(409, "InvalidBlobType", "The blob type is invalid for this operation.");
}

[[noreturn]] void blob_not_found() { fail(404, "BlobNotFound", "The specified blob does not exist."); }

BlobInfo require_blob(db::Database& db, const std::string& account, const std::string& container,
                      const std::string& name, const std::string& snapshot) {
    auto blob = find_blob(db, account, container, name, nullptr, snapshot);
    if (!blob) blob_not_found();
    return *blob;
}

std::vector<CommittedBlock> committed_blocks_of(db::Database& db, std::int64_t row) {
    auto q = db.prepare("SELECT block_id, size, offset, content_id FROM committed_blocks WHERE blob_id = ?1 ORDER BY seq");
    q.bind(1, row);
    std::vector<CommittedBlock> blocks;
    while (q.step()) {
        blocks.push_back({{q.column_text(0), static_cast<std::uint64_t>(q.column_int(1))},
                          static_cast<std::uint64_t>(q.column_int(2)),
                          q.column_text(3)});
    }
    return blocks;
}

// The block files a composed blob is made of (with repeats when a block is used twice).
std::vector<std::string> part_files(db::Database& db, std::int64_t row) {
    std::vector<std::string> ids;
    for (CommittedBlock& b : committed_blocks_of(db, row)) {
        if (!b.content_id.empty()) ids.push_back(std::move(b.content_id));
    }
    auto pages = db.prepare("SELECT DISTINCT content_id FROM page_ranges WHERE blob_id = ?1 AND content_id <> ''");
    pages.bind(1, row);
    while (pages.step()) ids.push_back(pages.column_text(0));
    return ids;
}

void insert_committed_blocks(db::Database& db, std::int64_t row, const std::vector<CommittedBlock>& blocks) {
    auto insert = db.prepare(
        "INSERT INTO committed_blocks(blob_id, seq, block_id, offset, size, content_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
    int64_t seq = 0;
    for (const CommittedBlock& b : blocks) {
        insert.bind(1, row)
            .bind(2, seq++)
            .bind(3, b.block.id)
            .bind(4, static_cast<int64_t>(b.offset))
            .bind(5, static_cast<int64_t>(b.block.size))
            .bind(6, b.content_id)
            .run();
    }
}

const std::string& BlockLinks::of(const std::string& id) {
    auto [it, fresh] = links_.emplace(id, "");
    if (fresh) {
        try {
            it->second = files_.link(account_, ContentKind::block, id);
        } catch (...) {
            links_.erase(it);
            throw;
        }
        made_.emplace_back(ContentKind::block, it->second);
    }
    return it->second;
}

void append_part(ContentWriter& writer, const BlobPart& part) {
    if (part.fd >= 0) {
        writer.append_from(part.fd, part.file_offset, part.size);
    } else if (part.bytes) {
        writer.append(std::string_view(*part.bytes).substr(part.file_offset, part.size));
    } else {
        writer.append(std::string(part.size, '\0'));
    }
}

std::vector<PageRow> write_runs_into_one_file(ContentFiles& files, const std::string& account, const OpenBlob& blob) {
    std::vector<PageRow> rows;
    auto writer = files.begin(false);
    for (const BlobPart& part : blob.parts) {
        if (part.fd < 0 && !part.bytes) continue;  // zeros: not written
        rows.push_back({part.start, part.start + part.size, "", writer->size(), ""});
        append_part(*writer, part);
    }
    if (rows.empty()) return rows;  // nothing written: no file
    const std::string id = files.commit(*writer, account, ContentKind::block);
    for (PageRow& r : rows) r.content_id = id;
    return rows;
}

std::vector<PageRow> page_rows_of(db::Database& db, std::int64_t row) {
    auto q = db.prepare("SELECT start, end, content_id, content_offset, data FROM page_ranges WHERE blob_id = ?1"
                        " ORDER BY start");
    q.bind(1, row);
    std::vector<PageRow> rows;
    while (q.step()) {
        rows.push_back({static_cast<std::uint64_t>(q.column_int(0)), static_cast<std::uint64_t>(q.column_int(1)),
                        q.column_text(2), static_cast<std::uint64_t>(q.column_int(3)), q.column_text(4)});
    }
    return rows;
}

void insert_page_rows(db::Database& db, std::int64_t row, const std::vector<PageRow>& rows) {
    auto insert = db.prepare(
        "INSERT INTO page_ranges(blob_id, start, end, content_id, content_offset, data) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
    for (const PageRow& p : rows) {
        insert.bind(1, row)
            .bind(2, static_cast<int64_t>(p.start))
            .bind(3, static_cast<int64_t>(p.end))
            .bind(4, p.content_id)
            .bind(5, static_cast<int64_t>(p.content_offset));
        if (p.content_id.empty()) insert.bind_blob(6, p.data); else insert.bind_null(6);
        insert.run();
    }
}

std::optional<Version> version_of(const std::optional<BlobInfo>& blob) {
    if (!blob) return std::nullopt;
    return Version{blob->etag, blob->last_modified, &blob->tags};
}

void check_block_id(const std::string& id) {
    auto decoded = crypto::base64_decode(id);
    if (id.empty() || !decoded || decoded->size() > 64) {
        fail(400, "InvalidQueryParameterValue",
             "Value for one of the query parameters specified in the request URI is invalid.\n"
             "QueryParameterName:blockid");
    }
}

// Names that start with `prefix` sort below prefix + "\xFF": UTF-8 never contains 0xFF.
std::string prefix_end(const std::string& prefix) { return prefix + "\xFF"; }

// Runs a file removal list after the metadata that referenced the files is gone.
void remove_contents(ContentFiles& files, const std::string& account,
                     const std::vector<std::pair<ContentKind, std::string>>& ids) {
    for (const auto& [kind, id] : ids) {
        if (!id.empty()) files.remove(account, kind, id);
    }
}



const char* blob_type_name(BlobType type) {
    switch (type) {
        case BlobType::page: return "PageBlob";
        case BlobType::append: return "AppendBlob";
        case BlobType::block: break;
    }
    return "BlockBlob";
}

std::optional<BlobType> blob_type_from_name(std::string_view name) {
    if (name == "BlockBlob") return BlobType::block;
    if (name == "PageBlob") return BlobType::page;
    if (name == "AppendBlob") return BlobType::append;
    return std::nullopt;
}

std::string copy_state_to_json(const CopyState& copy) {
    if (copy.empty()) return "";
    nlohmann::json j{{"id", copy.id},
                     {"source", copy.source},
                     {"status", copy.status},
                     {"progress", copy.progress},
                     {"completed", time::to_ticks(copy.completed)}};
    if (copy.incremental) {
        j["incremental"] = true;
        j["incremental_source"] = copy.incremental_source;
        j["source_snapshot"] = copy.source_snapshot;
        j["destination_snapshot"] = copy.destination_snapshot;
    }
    return j.dump();
}

CopyState copy_state_from_json(const std::string& json) {
    CopyState copy;
    if (json.empty()) return copy;
    auto j = nlohmann::json::parse(json);
    copy.id = j.value("id", "");
    copy.source = j.value("source", "");
    copy.status = j.value("status", "");
    copy.progress = j.value("progress", "");
    copy.completed = time::from_ticks(j.value("completed", int64_t{0}));
    copy.incremental = j.value("incremental", false);
    copy.incremental_source = j.value("incremental_source", "");
    copy.source_snapshot = j.value("source_snapshot", "");
    copy.destination_snapshot = j.value("destination_snapshot", "");
    return copy;
}

std::string signed_identifiers_to_json(const std::vector<SignedIdentifier>& identifiers) {
    if (identifiers.empty()) return "";
    nlohmann::json list = nlohmann::json::array();
    for (const SignedIdentifier& i : identifiers) {
        nlohmann::json one{{"id", i.id}, {"permission", i.permission}};
        if (i.start) one["start"] = time::to_ticks(*i.start);
        if (i.expiry) one["expiry"] = time::to_ticks(*i.expiry);
        list.push_back(std::move(one));
    }
    return list.dump();
}

std::vector<SignedIdentifier> signed_identifiers_from_json(const std::string& json) {
    std::vector<SignedIdentifier> out;
    if (json.empty()) return out;
    for (const nlohmann::json& one : nlohmann::json::parse(json)) {
        SignedIdentifier i;
        i.id = one.value("id", "");
        i.permission = one.value("permission", "");
        if (one.contains("start")) i.start = time::from_ticks(one["start"].get<int64_t>());
        if (one.contains("expiry")) i.expiry = time::from_ticks(one["expiry"].get<int64_t>());
        out.push_back(std::move(i));
    }
    return out;
}

}  // namespace bai::storage
