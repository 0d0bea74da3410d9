// FileStore::create_permission and get_permission: a share's permissions (Create Permission),
// kept by key with the share; its snapshots read the share's.
#include "fake_storage/engine/file_store.h"
#include "fake_storage/engine/share_rows.h"
#include "fake_storage/engine/share_snapshot_names.h"

namespace bai::storage {

void FileStore::create_permission(const std::string& account, const std::string& share, const std::string& key,
                                  const std::string& sddl) {
    db_.transaction([&](db::Database& db) {
        share_rows::require_share(db, account, share);
        db.prepare("INSERT OR REPLACE INTO share_permissions(account, share, key, permission) VALUES (?1, ?2, ?3, ?4)")
            .bind(1, account)
            .bind(2, split_share_snapshot_key(share).first)
            .bind(3, key)
            .bind(4, sddl)
            .run();
    });
}

std::optional<std::string> FileStore::get_permission(const std::string& account, const std::string& share,
                                                     const std::string& key) {
    std::optional<std::string> found;
    db_.read([&](db::Database& db) {
        share_rows::require_share(db, account, share);
        auto q = db.prepare("SELECT permission FROM share_permissions WHERE account = ?1 AND share = ?2 AND key = ?3");
        q.bind(1, account).bind(2, split_share_snapshot_key(share).first).bind(3, key);
        if (q.step()) found = q.column_text(0);
    });
    return found;
}

}  // namespace bai::storage
