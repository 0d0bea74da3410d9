// Listings of containers and of blobs: pages that start after a marker, with prefixes,
// delimiters, snapshots and uncommitted blobs.
#include "fake_storage/engine/blob_rows.h"
#include "fake_storage/engine/blob_store.h"
#include "fake_storage/engine/storage_error.h"

namespace bai::storage {

using std::int64_t;

// The marker is the service's: "/ACCOUNT/NAME", NAME the first container of the next page
// (recorded). A bare name is taken as Azurite's marker, the last container a page listed, which
// code written against Azurite may pass: the next page starts after it.
ContainerListPage BlobStore::list_containers(const std::string& account, const ListOptions& o) {
    if (o.deleted) return list_containers_with_deleted(account, o);
    ContainerListPage page;
    const std::string own = "/" + account + "/";
    const bool service_marker = o.marker.rfind(own, 0) == 0;
    const std::string from = service_marker ? o.marker.substr(own.size()) : o.marker;
    db_.read([&](db::Database& db) {
        auto q = db.prepare(
            "SELECT name, etag, created, last_modified, metadata, public_access, lease, signed_identifiers FROM containers"
            " WHERE account = ?1 AND name >= ?2 AND (name > ?5 OR (?6 AND name = ?5)) AND name < ?3"
            " AND instr(name, '~') = 0"  // not a deleted container's key
            " ORDER BY name LIMIT ?4");
        q.bind(1, account)
            .bind(2, o.prefix)
            .bind(3, prefix_end(o.prefix))
            .bind(4, o.max_results + 1)
            .bind(5, from)
            .bind(6, std::int64_t{service_marker ? 1 : 0});
        while (q.step()) {
            ContainerInfo c = read_container(q);
            if (static_cast<int>(page.containers.size()) == o.max_results) {
                page.next_marker = own + c.name;
                break;
            }
            page.containers.push_back(std::move(c));
        }
    });
    return page;
}

// The marker is the last entry a page listed (Azurite's choice, as for containers): the next page
// starts after it. With snapshots, a blob's snapshots come before it, oldest first, and a marker
// names an entry as NAME?snapshot=KEY, KEY being the snapshot's time or "~" for the blob itself.
BlobListPage BlobStore::list_blobs(const std::string& account, const std::string& container,
                                   const ListOptions& o) {
    static constexpr std::string_view kSnapshotMarker = "?snapshot=";
    BlobListPage page;
    db_.read([&](db::Database& db) {
        require_container(db, account, container);
        std::string marker_name = o.marker;
        std::string marker_key = "~~";  // after every row of the name (the blob's "~", its deleted "~!...")
        if (size_t at = o.marker.rfind(kSnapshotMarker);
            (o.snapshots || o.versions || o.deleted) && at != std::string::npos) {
            marker_name = o.marker.substr(0, at);
            marker_key = o.marker.substr(at + kSnapshotMarker.size());
        }
        // Where to start: after the marker's entry (or after its whole group of names, for a
        // prefix the delimiter made), or at the prefix.
        std::string start = o.prefix;
        std::string after_key;  // entries of the start name whose key is greater
        if (!o.marker.empty() && marker_name >= o.prefix) {
            start = marker_name;
            after_key = marker_key;
            if (!o.delimiter.empty() && marker_name.ends_with(o.delimiter) && marker_key == "~~") {
                start = prefix_end(marker_name);
                after_key.clear();
            }
        }
        const std::string end = prefix_end(o.prefix);
        auto entries = [&] { return static_cast<int>(page.entries.size()); };
        std::string last;  // the key of the last entry listed
        bool more = true;
        // With uncommitted blobs: a name with staged blocks and no blob is an empty block blob.
        const std::string rows =
            o.uncommitted
                ? std::string("(SELECT account, ") + kBlobColumns +
                      " FROM blobs WHERE account = ?1 AND container = ?2 UNION ALL"
                      " SELECT u.account, u.container, u.blob, '', 0, '', min(u.created), max(u.created), '', '', 0, '',"
                      " '', 'BlockBlob', 0, 0, 0, '', 0, '', '', '', 0, '' FROM uncommitted_blocks u"
                      " WHERE u.account = ?1 AND u.container = ?2 AND NOT EXISTS (SELECT 1 FROM blobs b"
                      " WHERE b.account = u.account AND b.container = u.container AND b.name = u.blob)"
                      " GROUP BY u.blob)"
                : std::string("blobs");
        while (more) {
            more = false;
            // Without snapshots a name has one row: the index's order is the listing's (no sort).
            // A soft deleted row ('!', 28 characters of time, its key before) sorts where its key
            // did, after a live row of that key.
            auto q = db.prepare(std::string("SELECT ") + (o.brief && !o.uncommitted ? kBriefBlobColumns : kBlobColumns) +
                                ", CASE WHEN snapshot = '' THEN '~' WHEN substr(snapshot, 1, 1) = '!' THEN"
                                " (CASE WHEN length(snapshot) = 29 THEN '~' ELSE substr(snapshot, 30) END)"
                                " || '!' || substr(snapshot, 2, 28) ELSE snapshot END AS skey"
                                " FROM " + rows + " WHERE account = ?1 AND container = ?2 AND name >= ?3"
                                " AND name < ?4 AND (snapshot = '' OR (substr(snapshot, 1, 1) = '@' AND ?8)"
                                " OR (substr(snapshot, 1, 1) NOT IN ('@', '!') AND ?6)"
                                " OR (substr(snapshot, 1, 1) = '!' AND ?9 AND (length(snapshot) = 29 OR ?6)))"
                                " AND (name > ?3 OR skey > ?7)"
                                " ORDER BY name" + (o.snapshots || o.versions || o.deleted ? ", skey" : "") + " LIMIT ?5");
            q.bind(1, account).bind(2, container).bind(3, start).bind(4, end).bind(
                5, o.max_results - entries() + 1).bind(6, int64_t{o.snapshots ? 1 : 0}).bind(7, after_key)
                .bind(8, int64_t{o.versions ? 1 : 0}).bind(9, int64_t{o.deleted ? 1 : 0});
            after_key.clear();
            while (q.step()) {
                std::string name = q.column_text(1);
                std::string group;
                if (!o.delimiter.empty()) {
                    size_t d = name.find(o.delimiter, o.prefix.size());
                    if (d != std::string::npos) group = name.substr(0, d + o.delimiter.size());
                }
                if (entries() == o.max_results) {
                    page.next_marker = last;
                    return;
                }
                if (group.empty()) {
                    last = name;
                    if (o.snapshots || o.versions || o.deleted) {
                        last += std::string(kSnapshotMarker) + q.column_text(kBlobColumnCount);
                    }
                    page.entries.push_back({false, "", o.brief ? read_blob_brief(q) : read_blob(q)});
                } else {
                    last = group;
                    page.entries.push_back({true, group, {}});
                    start = prefix_end(group);  // skip the rest of this group
                    more = true;
                    break;
                }
            }
        }
    });
    return page;
}

}  // namespace bai::storage
