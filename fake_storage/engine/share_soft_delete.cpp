// Share soft delete: with the account's ShareDeleteRetentionPolicy on, Delete Share keeps the share
// and its snapshots under a deleted share's key ("SHARE~VERSION", share_snapshot_names.h): their
// rows are renamed, and their directories moved out of the shares' directory, in one transaction,
// so no mount or job sees a deleted share, and Undelete Share moves them back as they were.
#include <functional>
#include <vector>

#include "fake_storage/engine/file_store.h"
#include "fake_storage/engine/names.h"
#include "fake_storage/engine/share_rows.h"
#include "fake_storage/engine/share_snapshot_names.h"
#include "fake_storage/engine/storage_error.h"

namespace bai::storage {
namespace fs = std::filesystem;
using namespace share_rows;

namespace {

// The keys of a share's snapshots ("NAME/..." sorts below "NAME0": '0' follows '/').
std::vector<std::string> snapshot_keys(db::Database& db, const std::string& account, const std::string& key) {
    std::vector<std::string> keys;
    auto q = db.prepare("SELECT name FROM shares WHERE account = ?1 AND name > ?2 AND name < ?3");
    q.bind(1, account).bind(2, key + "/").bind(3, key + "0");
    while (q.step()) keys.push_back(q.column_text(0));
    return keys;
}

void rename_rows(db::Database& db, const std::string& account, const std::string& from, const std::string& to) {
    db.prepare("UPDATE shares SET name = ?3 WHERE account = ?1 AND name = ?2").bind(1, account).bind(2, from).bind(3, to).run();
    for (const char* sql : {"UPDATE share_entries SET share = ?3 WHERE account = ?1 AND share = ?2",
                            "UPDATE pending_ranges SET share = ?3 WHERE account = ?1 AND share = ?2",
                            "UPDATE share_permissions SET share = ?3 WHERE account = ?1 AND share = ?2"}) {
        db.prepare(sql).bind(1, account).bind(2, from).bind(3, to).run();
    }
}

// A share's directory (or a snapshot's) moved with its rows; a failure undoes the transaction.
void move_directory(const fs::path& from, const fs::path& to) {
    std::error_code ec;
    if (!fs::exists(from, ec)) return;  // a share whose directory went missing keeps its rows only
    fs::create_directories(to.parent_path(), ec);
    fs::rename(from, to, ec);
    if (ec) io_failure("move " + from.string() + " to", to);
}

// A share renamed (to its deleted share's key, or back): its snapshots first, each renamed under
// the new name, then the share itself; rows and directories together. `root` is a key's directory.
void move_share(db::Database& db, const std::string& account, const std::string& from, const std::string& to,
                const std::vector<std::string>& snapshots, const std::function<fs::path(const std::string&)>& root) {
    for (const std::string& key : snapshots) {
        const std::string moved = share_snapshot_key(to, split_share_snapshot_key(key).second);
        rename_rows(db, account, key, moved);
        move_directory(root(key), root(moved));
    }
    rename_rows(db, account, from, to);
    move_directory(root(from), root(to));
}

}  // namespace

void FileStore::soft_delete_share(const std::string& account, const std::string& name,
                                  const std::optional<std::string>& lease_id, bool with_snapshots) {
    db_.transaction([&](db::Database& db) {
        const time::TimePoint now = time::now();
        auto s = find_share(db, account, name);
        if (!s) share_not_found();
        const std::vector<std::string> snapshots = snapshot_keys(db, account, name);
        if (!snapshots.empty() && !with_snapshots) {
            fail(409, "ShareHasSnapshots", "The share has snapshots and the operation requires no snapshots.");
        }
        for (const std::string& key : snapshots) {
            if (find_share(db, account, key)->lease.locked(now)) {
                fail(409, "DeleteShareWhenSnapshotLeased",
                     "Unable to delete share because one or more share snapshots have active leases.");
            }
        }
        check_lease_for_write(s->lease, lease_id, now, LeaseTarget::container);
        // The version is the deletion's time, to the tick; the next free tick when a share of the
        // name was deleted in this one.
        time::TimePoint at = now;
        while (find_share(db, account, deleted_share_key(name, deleted_share_version(at)))) at += std::chrono::nanoseconds(100);
        const std::string deleted = deleted_share_key(name, deleted_share_version(at));
        move_share(db, account, name, deleted, snapshots, [&](const std::string& key) { return share_root(account, key); });
    });
    std::error_code ec;
    fs::remove(files_.root() / account / "share-snapshots" / name, ec);  // if empty
}

ShareInfo FileStore::undelete_share(const std::string& account, const std::string& name, const std::string& deleted_name,
                                    const std::string& version, time::TimePoint kept_since) {
    purge_deleted_shares(account, kept_since);
    ShareInfo out;
    db_.transaction([&](db::Database& db) {
        const std::string deleted = deleted_share_key(deleted_name, version);
        auto s = find_share(db, account, deleted);
        if (!s) share_not_found();
        if (find_share(db, account, name)) fail(409, "ShareAlreadyExists", "The specified share already exists.");
        move_share(db, account, deleted, name, snapshot_keys(db, account, deleted),
                   [&](const std::string& key) { return share_root(account, key); });
        std::error_code ec;
        fs::create_directories(share_root(account, name), ec);
        const time::TimePoint now = time::now();
        const std::string etag = new_etag();
        db.prepare("UPDATE shares SET etag = ?3, last_modified = ?4, lease = '' WHERE account = ?1 AND name = ?2")
            .bind(1, account).bind(2, name).bind(3, etag).bind(4, time::to_ticks(now)).run();
        out = *find_share(db, account, name);
    });
    std::error_code ec;
    fs::remove(files_.root() / account / "share-snapshots" / deleted_share_key(deleted_name, version), ec);  // if empty
    changes_.publish(account, name, "");  // the whole share: its mounts show its files again
    return out;
}

void FileStore::purge_deleted_shares(const std::string& account, time::TimePoint kept_since) {
    std::vector<fs::path> trash;
    db_.transaction([&](db::Database& db) {
        std::vector<std::string> expired;
        auto q = db.prepare("SELECT name FROM shares WHERE account = ?1 AND instr(name, '~') > 0");
        q.bind(1, account);
        while (q.step()) {
            const std::string key = q.column_text(0);
            auto deleted = deleted_share_time(split_deleted_share_key(key).second);
            if (deleted && *deleted < kept_since) expired.push_back(key);
        }
        for (const std::string& key : expired) drop_share(db, account, key, trash);
    });
    std::error_code ec;
    for (const fs::path& dir : trash) fs::remove_all(dir, ec);
}

}  // namespace bai::storage
