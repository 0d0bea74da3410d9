// Page blobs: Put Page (update and clear), Get Page Ranges, resize and sequence numbers.
//
// A page blob's bytes are its written runs (page_ranges rows): each a run of an immutable block
// file, or inline in its row for writes up to kInlineLimit; what no run covers reads as zeros. A
// Put Page writes its body first (a file, or nothing when inline), then in one transaction trims
// the runs it overwrites and adds its own: a kill -9 leaves every page as before or after it.
// When a blob gathers more than kMaxPageFiles files or kMaxInlinePages inline bytes, its runs are
// rewritten into one file (in order, only the written bytes), so a reader holds few descriptors.
#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <set>

#include "fake_storage/engine/blob_rows.h"
#include "fake_storage/engine/blob_store.h"
#include "fake_storage/engine/storage_error.h"

namespace bai::storage {
namespace {

using std::int64_t;

constexpr size_t kMaxPageFiles = 64;
constexpr std::uint64_t kMaxInlinePages = 4ull * 1024 * 1024;

[[noreturn]] void invalid_page_range() {
    fail(416, "InvalidPageRange", "The page range specified is invalid.");
}

void check_sequence(const SequenceConditions& c, std::int64_t current) {
    if ((c.le && current > *c.le) || (c.lt && current >= *c.lt) || (c.eq && current != *c.eq)) {
        fail(412, "SequenceNumberConditionNotMet", "The sequence number condition specified was not met.");
    }
}

// Removes [start, end) from the blob's runs: runs inside it go, runs across its edges are trimmed
// (they keep their bytes' place in their file or inline data). The block files no run refers to
// any more are added to `unreferenced`.
void cut_pages(db::Database& db, int64_t row, std::uint64_t start, std::uint64_t end,
               std::vector<std::pair<ContentKind, std::string>>& unreferenced) {
    auto q = db.prepare(
        "SELECT start, end, content_id, content_offset, data FROM page_ranges WHERE blob_id = ?1 AND start < ?3"
        " AND end > ?2 ORDER BY start");
    q.bind(1, row).bind(2, static_cast<int64_t>(start)).bind(3, static_cast<int64_t>(end));
    std::vector<PageRow> hit;
    while (q.step()) {
        hit.push_back({static_cast<std::uint64_t>(q.column_int(0)), static_cast<std::uint64_t>(q.column_int(1)),
                       q.column_text(2), static_cast<std::uint64_t>(q.column_int(3)), q.column_text(4)});
    }
    q.reset();
    if (hit.empty()) return;
    db.prepare("DELETE FROM page_ranges WHERE blob_id = ?1 AND start < ?3 AND end > ?2")
        .bind(1, row)
        .bind(2, static_cast<int64_t>(start))
        .bind(3, static_cast<int64_t>(end))
        .run();
    std::vector<PageRow> kept;
    std::set<std::string> files;
    for (const PageRow& p : hit) {
        if (!p.content_id.empty()) files.insert(p.content_id);
        if (p.start < start) {
            PageRow left = p;
            left.end = start;
            if (left.content_id.empty()) left.data = p.data.substr(0, start - p.start);
            kept.push_back(std::move(left));
        }
        if (p.end > end) {
            PageRow right = p;
            right.start = end;
            right.content_offset = p.content_offset + (end - p.start);
            if (right.content_id.empty()) {
                right.data = p.data.substr(end - p.start);
                right.content_offset = 0;
            }
            kept.push_back(std::move(right));
        }
    }
    insert_page_rows(db, row, kept);
    auto used = db.prepare("SELECT 1 FROM page_ranges WHERE content_id = ?1 LIMIT 1");
    for (const std::string& id : files) {
        used.bind(1, id);
        const bool still = used.step();
        used.reset();
        if (!still) unreferenced.emplace_back(ContentKind::block, id);
    }
}

// The page blob a write changes, once its conditions and lease allow the write.
BlobInfo writable_page_blob(db::Database& db, const std::string& account, const std::string& container,
                            const std::string& name, const Conditions& conditions, time::TimePoint now) {
    BlobInfo blob = require_blob(db, account, container, name);
    if (blob.type != BlobType::page) invalid_blob_type();
    check_write_conditions(conditions, version_of(blob), "", "");
    check_lease_for_write(blob.lease, conditions.lease_id, now, LeaseTarget::blob);
    refuse_on_incremental_copy(blob);
    return blob;
}

// A write of pages gives the blob a new ETag and Last-Modified (and ends an expired lease).
void new_page_version(db::Database& db, BlobInfo& blob, time::TimePoint now) {
    blob.etag = new_etag();
    blob.last_modified = time::now();
    blob.lease = lease_after_write(blob.lease, now);
    db.prepare("UPDATE blobs SET etag = ?2, last_modified = ?3, lease = ?4 WHERE id = ?1")
        .bind(1, blob.row)
        .bind(2, blob.etag)
        .bind(3, time::to_ticks(blob.last_modified))
        .bind(4, lease_to_json(blob.lease))
        .run();
}

// Inline rows hold their bytes from offset 0: a trimmed inline run keeps its own slice.
std::string_view inline_bytes(const PageRow& p) { return std::string_view(p.data).substr(0, p.end - p.start); }

}  // namespace

bool BlobStore::open_pages(const std::string& account, OpenBlob& open, const std::vector<PageRow>& rows) {
    std::map<std::string, int> fds;  // one descriptor per file, owned by its first part
    std::uint64_t at = 0;
    for (const PageRow& p : rows) {
        if (p.start >= open.info.size) break;
        const std::uint64_t end = std::min(p.end, open.info.size);
        if (p.start > at) open.parts.emplace_back(-1, at, p.start - at);  // zeros
        if (p.content_id.empty()) {
            BlobPart part(-1, p.start, end - p.start);
            part.bytes = std::make_shared<const std::string>(inline_bytes(p));
            open.parts.push_back(std::move(part));
        } else {
            auto [it, fresh] = fds.emplace(p.content_id, -1);
            if (fresh) {
                it->second = files_.open(account, ContentKind::block, p.content_id);
                if (it->second < 0) return false;
            }
            BlobPart part(it->second, p.start, end - p.start);
            part.file_offset = p.content_offset;
            part.owns = fresh;
            open.parts.push_back(std::move(part));
        }
        at = end;
    }
    if (at < open.info.size) open.parts.emplace_back(-1, at, open.info.size - at);
    return true;
}

BlobInfo BlobStore::put_pages(const std::string& account, const std::string& container, const std::string& name,
                              std::uint64_t start, ContentWriter& writer, const Conditions& conditions,
                              const SequenceConditions& sequence) {
    PublishOnReturn publish(changes_, account, container, name);
    const std::uint64_t size = writer.size();
    if (size == 0 || start % kPageSize != 0 || size % kPageSize != 0 || start > kMaxPageBlobSize) invalid_page_range();
    if (size > kMaxPutPage) {
        fail(413, "RequestBodyTooLarge", "The request body is too large and exceeds the maximum permissible limit.");
    }
    std::lock_guard lock(lock_for(account, container, name));
    std::vector<std::pair<ContentKind, std::string>> created;
    std::vector<std::pair<ContentKind, std::string>> garbage;
    PageRow page{start, start + size, "", 0, ""};
    if (writer.in_memory()) {
        page.data = writer.bytes();
    } else {
        page.content_id = files_.commit(writer, account, ContentKind::block);
        created.emplace_back(ContentKind::block, page.content_id);
    }
    BlobInfo blob;
    bool compact = false;
    try {
        write([&](db::Database& db) {
            garbage.clear();
            blob = writable_page_blob(db, account, container, name, conditions, clock_now());
            check_sequence(sequence, blob.sequence_number);
            if (start > blob.size || size > blob.size - start) invalid_page_range();  // no overflow
            cut_pages(db, blob.row, page.start, page.end, garbage);
            insert_page_rows(db, blob.row, {page});
            new_page_version(db, blob, clock_now());
            auto load = db.prepare(
                "SELECT count(DISTINCT NULLIF(content_id, '')), coalesce(sum(length(data)), 0) FROM page_ranges"
                " WHERE blob_id = ?1");
            load.bind(1, blob.row);
            load.step();
            compact = static_cast<size_t>(load.column_int(0)) > kMaxPageFiles ||
                      static_cast<std::uint64_t>(load.column_int(1)) > kMaxInlinePages;
        });
    } catch (...) {
        remove_contents(files_, account, created);
        throw;
    }
    remove_contents(files_, account, garbage);
    if (!compact) return blob;

    // Rewrite every run into one file, in order (still under the blob's lock: no write between).
    const std::vector<PageRow> rows = write_runs_into_one_file(files_, account, open(account, container, name, nullptr));
    const std::string merged_id = rows.empty() ? std::string() : rows.front().content_id;
    std::vector<std::pair<ContentKind, std::string>> replaced;
    try {
        write([&](db::Database& db) {
            replaced.clear();
            BlobInfo now = require_blob(db, account, container, name);
            if (now.row != blob.row) throw std::runtime_error("a page blob changed during its compaction");
            for (std::string& id : part_files(db, blob.row)) replaced.emplace_back(ContentKind::block, std::move(id));
            db.prepare("DELETE FROM page_ranges WHERE blob_id = ?1").bind(1, blob.row).run();
            insert_page_rows(db, blob.row, rows);
        });
    } catch (...) {
        if (!merged_id.empty()) files_.remove(account, ContentKind::block, merged_id);
        throw;
    }
    remove_contents(files_, account, replaced);
    return blob;
}

BlobInfo BlobStore::clear_pages(const std::string& account, const std::string& container, const std::string& name,
                                std::uint64_t start, std::uint64_t end, const Conditions& conditions,
                                const SequenceConditions& sequence) {
    PublishOnReturn publish(changes_, account, container, name);
    if (end <= start || start % kPageSize != 0 || end % kPageSize != 0) invalid_page_range();
    std::lock_guard lock(lock_for(account, container, name));  // (end > start: no overflow below)
    std::vector<std::pair<ContentKind, std::string>> garbage;
    BlobInfo blob;
    write([&](db::Database& db) {
        garbage.clear();
        blob = writable_page_blob(db, account, container, name, conditions, clock_now());
        check_sequence(sequence, blob.sequence_number);
        if (end > blob.size) invalid_page_range();
        cut_pages(db, blob.row, start, end, garbage);
        new_page_version(db, blob, clock_now());
    });
    remove_contents(files_, account, garbage);
    return blob;
}

PageRangeList BlobStore::get_page_ranges(const std::string& account, const std::string& container,
                                         const std::string& name, const std::string& snapshot,
                                         const std::optional<std::pair<std::uint64_t, std::uint64_t>>& range,
                                         const std::string& previous_snapshot, const Conditions& conditions) {
    PageRangeList list;
    std::vector<PageRow> rows;
    std::vector<PageRow> before;
    std::vector<PageRow> since;  // the pages of the snapshots taken after the previous one
    db_.read([&](db::Database& db) {
        list.blob = require_blob(db, account, container, name, snapshot);
        if (list.blob.type != BlobType::page) invalid_blob_type();
        refuse_on_incremental_copy(list.blob);
        rows = page_rows_of(db, list.blob.row);
        if (!previous_snapshot.empty()) {
            auto previous = find_blob(db, account, container, name, nullptr, previous_snapshot);
            if (!previous) {
                fail(404, "PreviousSnapshotNotFound", "The previous snapshot is not found.");
            }
            before = page_rows_of(db, previous->row);
            // And the snapshots taken since it (up to the one read, when one is): a page one of
            // them had is a page written after the previous snapshot.
            auto later = db.prepare(
                "SELECT id FROM blobs WHERE account = ?1 AND container = ?2 AND name = ?3 AND snapshot > ?4"
                " AND (?5 = '' OR snapshot < ?5) AND substr(snapshot, 1, 1) BETWEEN '0' AND '9'");
            later.bind(1, account).bind(2, container).bind(3, name).bind(4, previous_snapshot).bind(5, snapshot);
            while (later.step()) {
                for (PageRow& row : page_rows_of(db, later.column_int(0))) since.push_back(std::move(row));
            }
        }
    });
    check_read_conditions(conditions, Version{list.blob.etag, list.blob.last_modified, &list.blob.tags});
    if (snapshot.empty()) check_lease_if_named(list.blob.lease, conditions.lease_id, clock_now(), LeaseTarget::blob);
    std::uint64_t first = 0;
    std::uint64_t end = list.blob.size;  // exclusive
    if (range) {
        first = range->first;
        end = std::min(list.blob.size, range->second + 1);
        if (first >= list.blob.size && list.blob.size > 0) invalid_page_range();
    }
    // Each run as it was written (adjacent runs stay apart, as Azurite lists them); what lies
    // outside [first, end) is cut off.
    auto ranges_of = [&](const std::vector<PageRow>& runs, auto keep) {
        std::vector<std::pair<std::uint64_t, std::uint64_t>> out;  // [start, end)
        for (const PageRow& p : runs) {
            if (!keep(p)) continue;
            std::uint64_t s = std::max(p.start, first);
            std::uint64_t e = std::min(p.end, end);
            if (s < e) out.emplace_back(s, e);
        }
        return out;
    };
    auto inclusive = [](std::vector<std::pair<std::uint64_t, std::uint64_t>> v) {
        for (auto& r : v) r.second -= 1;
        return v;
    };
    if (previous_snapshot.empty()) {
        list.pages = inclusive(ranges_of(rows, [](const PageRow&) { return true; }));
        return list;
    }
    // Against a snapshot: the parts of runs whose bytes are not the snapshot's, and the pages the
    // snapshot had that no run covers now (cleared). A part the snapshot shares is at the same
    // place of the same file (a hard link of it: the same inode), or the same inline bytes.
    std::map<std::string, ino_t> inodes;
    auto inode = [&](const std::string& id) -> ino_t {
        auto [it, fresh] = inodes.emplace(id, 0);
        struct stat st {};
        if (fresh && ::stat(files_.path(account, ContentKind::block, id).c_str(), &st) == 0) it->second = st.st_ino;
        return it->second;
    };
    std::vector<PageRow> changed;
    for (const PageRow& p : rows) {
        std::vector<std::pair<std::uint64_t, std::uint64_t>> shared;  // [start, end) of p the snapshot has
        for (const PageRow& q : before) {
            const std::uint64_t s = std::max(p.start, q.start);
            const std::uint64_t e = std::min(p.end, q.end);
            if (s >= e || p.content_id.empty() != q.content_id.empty()) continue;
            bool same;
            if (p.content_id.empty()) {
                same = inline_bytes(p).substr(s - p.start, e - s) == inline_bytes(q).substr(s - q.start, e - s);
            } else {
                same = p.content_offset + (s - p.start) == q.content_offset + (s - q.start) &&
                       inode(p.content_id) != 0 && inode(p.content_id) == inode(q.content_id);
            }
            if (same) shared.emplace_back(s, e);
        }
        std::sort(shared.begin(), shared.end());
        std::uint64_t at = p.start;
        for (const auto& [s, e] : shared) {
            if (s > at) changed.push_back({at, s, "", 0, ""});
            at = std::max(at, e);
        }
        if (at < p.end) changed.push_back({at, p.end, "", 0, ""});
    }
    list.pages = inclusive(ranges_of(changed, [](const PageRow&) { return true; }));
    // Cleared: pages the snapshot had, or a later snapshot had (written after it), that no run
    // covers now, as the service names pages cleared since the snapshot (recorded: written and
    // cleared after it, where it had none). The service keeps every change: pages written and
    // cleared between two snapshots are cleared there too, and not known here.
    std::vector<PageRow> gaps;
    for (const std::vector<PageRow>* had : {&before, &since}) {
        for (const PageRow& q : *had) {
            std::uint64_t at = q.start;
            for (const PageRow& p : rows) {
                if (p.end <= at || p.start >= q.end) continue;
                if (p.start > at) gaps.push_back({at, p.start, "", 0, ""});
                at = std::max(at, p.end);
            }
            if (at < q.end) gaps.push_back({at, q.end, "", 0, ""});
        }
    }
    // One range for pages that several snapshots had, in order of their start.
    std::sort(gaps.begin(), gaps.end(), [](const PageRow& a, const PageRow& b) { return a.start < b.start; });
    std::vector<PageRow> cleared;
    for (const PageRow& g : gaps) {
        if (!cleared.empty() && g.start < cleared.back().end) {  // overlapping (adjacent runs stay apart, as written)
            cleared.back().end = std::max(cleared.back().end, g.end);
        } else {
            cleared.push_back(g);
        }
    }
    list.cleared = inclusive(ranges_of(cleared, [](const PageRow&) { return true; }));
    return list;
}

BlobInfo BlobStore::set_page_blob_properties(const std::string& account, const std::string& container,
                                             const std::string& name, const std::optional<ContentSettings>& content,
                                             std::optional<std::uint64_t> size, std::optional<SequenceAction> action,
                                             std::optional<std::int64_t> sequence_number,
                                             const Conditions& conditions) {
    PublishOnReturn publish(changes_, account, container, name);
    if (size && (*size % kPageSize != 0 || *size > kMaxPageBlobSize)) {
        fail(400, "InvalidHeaderValue",
             "The value for one of the HTTP headers is not in the correct format.\nHeaderName:x-ms-blob-content-length\n"
             "HeaderValue:" + std::to_string(*size));
    }
    std::lock_guard lock(lock_for(account, container, name));
    std::vector<std::pair<ContentKind, std::string>> garbage;
    BlobInfo blob;
    write([&](db::Database& db) {
        garbage.clear();
        blob = writable_page_blob(db, account, container, name, conditions, clock_now());
        if (content) blob.content = *content;
        if (size) {
            if (*size < blob.size) cut_pages(db, blob.row, *size, blob.size, garbage);
            blob.size = *size;
        }
        if (action) {
            switch (*action) {
                case SequenceAction::increment: blob.sequence_number += 1; break;
                case SequenceAction::update: blob.sequence_number = sequence_number.value_or(0); break;
                case SequenceAction::max: blob.sequence_number = std::max(blob.sequence_number, sequence_number.value_or(0)); break;
            }
        }
        blob.etag = new_etag();
        blob.last_modified = time::now();
        blob.lease = lease_after_write(blob.lease, clock_now());
        db.prepare("UPDATE blobs SET size = ?2, content = ?3, sequence_number = ?4, etag = ?5, last_modified = ?6,"
                   " lease = ?7 WHERE id = ?1")
            .bind(1, blob.row)
            .bind(2, static_cast<int64_t>(blob.size))
            .bind(3, encode_content_settings(blob.content))
            .bind(4, blob.sequence_number)
            .bind(5, blob.etag)
            .bind(6, time::to_ticks(blob.last_modified))
            .bind(7, lease_to_json(blob.lease))
            .run();
    });
    remove_contents(files_, account, garbage);
    return blob;
}

}  // namespace bai::storage
