// What blobs carry besides bytes and metadata that the service changes without a new version:
// access tiers and blob index tags (and finding blobs by their tags).
#include "common/text/ascii.h"
#include "fake_storage/engine/blob_rows.h"
#include "fake_storage/engine/blob_store.h"
#include "fake_storage/engine/storage_error.h"

namespace bai::storage {

using std::int64_t;

BlobInfo BlobStore::set_blob_tags(const std::string& account, const std::string& container, const std::string& name,
                                  const std::string& snapshot, const Tags& tags, const Conditions& conditions) {
    return update_blob(
        account, container, name, conditions, [&](BlobInfo& blob) { blob.tags = tags; }, snapshot,
        /*same_version=*/true);
}

std::pair<BlobInfo, bool> BlobStore::set_blob_tier(const std::string& account, const std::string& container,
                                                   const std::string& name, const std::string& snapshot,
                                                   const std::string& tier, const Conditions& conditions) {
    std::string canonical;
    for (const char* known : {"Hot", "Cool", "Cold", "Archive"}) {
        if (text::iequals(tier, known)) canonical = known;
    }
    if (canonical.empty()) {
        fail(400, "InvalidHeaderValue",
             "The value for one of the HTTP headers is not in the correct format.\nHeaderName:x-ms-access-tier\n"
             "HeaderValue:" + tier);
    }
    bool was_archived = false;
    BlobInfo blob = update_blob(
        account, container, name, conditions,
        [&](BlobInfo& b) {
            if (b.type != BlobType::block) {
                fail(400, "InvalidBlobType", "The blob type is invalid for this operation.");
            }
            was_archived = b.tier == "Archive";
            if (b.tier != canonical) {
                b.tier = canonical;
                b.tier_changed = clock_now();
            }
            b.archive_status.clear();
        },
        snapshot, /*same_version=*/true);
    return {blob, was_archived && canonical != "Archive"};
}

TaggedBlobPage BlobStore::find_blobs_by_tags(const std::string& account, const std::optional<std::string>& container,
                                             const TagExpression& where, const std::string& marker, int max_results) {
    TaggedBlobPage page;
    // The marker is CONTAINER/NAME of the next blob (container names have no slash).
    std::string from_container;
    std::string from_name;
    if (size_t slash = marker.find('/'); slash != std::string::npos) {
        from_container = marker.substr(0, slash);
        from_name = marker.substr(slash + 1);
    }
    db_.read([&](db::Database& db) {
        if (container) {
            auto c = db.prepare("SELECT 1 FROM containers WHERE account = ?1 AND name = ?2");
            c.bind(1, account).bind(2, *container);
            if (!c.step()) container_not_found();
        }
        auto q = db.prepare(
            "SELECT container, name, tags FROM blobs WHERE account = ?1 AND tags <> '' AND snapshot = ''"
            " AND instr(container, '~') = 0"  // not in a deleted container
            " AND (?2 IS NULL OR container = ?2) AND (container, name) >= (?3, ?4) ORDER BY container, name");
        q.bind(1, account).bind(3, from_container).bind(4, from_name);
        if (container) q.bind(2, *container); else q.bind_null(2);
        while (q.step()) {
            std::string c = q.column_text(0);
            Tags tags = tags_from_json(q.column_text(2));
            if (!where.matches(tags, c)) continue;
            if (static_cast<int>(page.blobs.size()) == max_results) {
                page.next_marker = c + "/" + q.column_text(1);
                break;
            }
            page.blobs.push_back({std::move(c), q.column_text(1), where.named(tags)});
        }
    });
    return page;
}

}  // namespace bai::storage
