// Blob soft delete (the account's delete retention policy): Delete Blob keeps what it deletes as
// rows of their own, keyed '!', the time of the deletion and the key they had; List Blobs shows
// them with include=deleted, and Undelete Blob gives them their keys back. Their files stay where
// they are (nothing is copied either way). The service removes them when their days are over;
// here they stay until the container goes (RemainingRetentionDays counts down to 0 and stays).
#include <algorithm>

#include "fake_storage/engine/blob_rows.h"
#include "fake_storage/engine/blob_store.h"

namespace bai::storage {

int BlobStore::delete_retention_days(const std::string& account) {
    const nlohmann::json properties = settings_.get(account, "blob", nlohmann::json::object());
    const nlohmann::json policy = properties.value("DeleteRetentionPolicy", nlohmann::json::object());
    if (!policy.is_object() || !policy.value("Enabled", false)) return 0;
    const nlohmann::json days = policy.value("Days", nlohmann::json(1));
    return days.is_number_integer() ? std::max(1, days.get<int>()) : 1;
}

void keep_as_deleted(db::Database& db, const BlobInfo& row) {
    // Two deletions of one key in one tick cannot happen: the first took the key away.
    const std::string key = "!" + time::format_iso8601(time::now(), 7) + row.snapshot;
    db.prepare("UPDATE blobs SET snapshot = ?2, lease = '' WHERE id = ?1").bind(1, row.row).bind(2, key).run();
}

void BlobStore::undelete_blob(const std::string& account, const std::string& container, const std::string& name) {
    PublishOnReturn publish(changes_, account, container, name);
    std::lock_guard lock(lock_for(account, container, name));
    write([&](db::Database& db) {
        bool live = find_blob(db, account, container, name).has_value();  // ContainerNotFound first
        // The latest deletion of each key first: it is the one that comes back.
        auto q = db.prepare("SELECT id, snapshot FROM blobs WHERE account = ?1 AND container = ?2 AND name = ?3"
                            " AND substr(snapshot, 1, 1) = '!' ORDER BY snapshot DESC");
        q.bind(1, account).bind(2, container).bind(3, name);
        std::vector<std::pair<std::int64_t, std::string>> deleted;
        while (q.step()) deleted.emplace_back(q.column_int(0), q.column_text(1));
        if (!live && deleted.empty()) blob_not_found();
        auto restore = db.prepare("UPDATE blobs SET snapshot = ?2 WHERE id = ?1");
        for (const auto& [row, key] : deleted) {
            const std::string before = key.size() > 29 ? key.substr(29) : "";
            if (before.empty() ? live : find_blob(db, account, container, name, nullptr, before).has_value()) continue;
            restore.bind(1, row).bind(2, before).run();
            if (before.empty()) live = true;
        }
    });
}

}  // namespace bai::storage
