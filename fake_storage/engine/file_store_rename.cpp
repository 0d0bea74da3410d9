// FileStore::rename: Rename File and Rename Directory, on disk and in the index in one step.
#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <mutex>
#include <shared_mutex>

#include "common/text/ascii.h"
#include "fake_storage/engine/file_store.h"
#include "fake_storage/engine/share_paths.h"
#include "fake_storage/engine/share_rows.h"
#include "fake_storage/engine/storage_error.h"

namespace bai::storage {

ShareEntry FileStore::rename(const std::string& account, const std::string& share, const std::string& from,
                             const std::string& to, bool directory, const RenameOptions& options) {
    using namespace share_rows;
    const SplitPath source = split(from);
    const SplitPath target = split(to);
    if (source.path.empty() || target.path.empty()) fail(400, "InvalidResourceName", "The share root cannot be renamed or replaced.");
    sync_from_disk(account, share, source.path);
    sync_from_disk(account, share, target.parent);
    sync_from_disk(account, share, target.path);
    const std::string lower_source = text::lower(source.path);
    const std::string lower_target = text::lower(target.path);
    if (directory && lower_target.starts_with(lower_source + "/")) {
        fail(400, "InvalidResourceName", "A directory cannot be renamed into itself.");
    }
    ShareEntry moved;
    std::string old_path;
    db_.transaction([&](db::Database& db) {
        moved = require_entry(db, account, share, source);
        if (moved.is_dir != directory) resource_not_found();
        if (!directory) check_lease_for_write(moved.lease, options.source_lease_id, time::now(), LeaseTarget::file);
        old_path = moved.path;
        const std::string parent = require_parent(db, account, share, target);
        const bool same_entry = lower_source == lower_target;
        std::optional<ShareEntry> existing = same_entry ? std::nullopt : find_entry(db, account, share, target.path);
        if (existing) {
            if (existing->is_dir || directory || !options.replace_if_exists) {
                fail(409, "ResourceAlreadyExists", "The specified resource already exists.");
            }
            if (existing->smb.attributes.find("ReadOnly") != std::string::npos && !options.ignore_read_only) {
                fail(409, "ReadOnlyAttribute", "The specified resource is read-only and cannot be modified at this time.");
            }
            check_lease_for_write(existing->lease, options.destination_lease_id, time::now(), LeaseTarget::file);
            db.prepare("DELETE FROM share_entries WHERE id = ?1").bind(1, existing->id).run();
            db.prepare("DELETE FROM pending_ranges WHERE account = ?1 AND share = ?2 AND path = ?3 COLLATE NOCASE")
                .bind(1, account).bind(2, share).bind(3, existing->path).run();
        }
        const std::string new_path = parent.empty() ? target.name : parent + "/" + target.name;
        if (directory) {  // what it holds moves with it
            db.prepare(
                  "UPDATE share_entries SET path = ?3 || substr(path, length(?4) + 1),"
                  " parent = ?3 || substr(parent, length(?4) + 1)"
                  " WHERE account = ?1 AND share = ?2 AND substr(path, 1, length(?4) + 1) = (?4 || '/') COLLATE NOCASE")
                .bind(1, account).bind(2, share).bind(3, new_path).bind(4, old_path).run();
        }
        db.prepare(
              "UPDATE pending_ranges SET path = ?3 || substr(path, length(?4) + 1) WHERE account = ?1 AND share = ?2"
              " AND (path = ?4 COLLATE NOCASE OR substr(path, 1, length(?4) + 1) = (?4 || '/') COLLATE NOCASE)")
            .bind(1, account).bind(2, share).bind(3, new_path).bind(4, old_path).run();
        db.prepare("UPDATE share_entries SET path = ?2, parent = ?3, name = ?4 WHERE id = ?1")
            .bind(1, moved.id).bind(2, new_path).bind(3, parent).bind(4, target.name).run();
        moved.path = new_path;
        moved.name = target.name;
        touch(moved);
        moved.smb = apply_smb(moved.smb, options.smb);
        if (!options.smb.change_time) moved.smb.change_time = moved.last_modified;
        if (options.metadata) moved.metadata = *options.metadata;
        if (options.content_type) moved.content.content_type = *options.content_type;
        save_entry(db, moved);

        // On disk last: a failure there rolls the index back with it.
        std::shared_mutex& source_lock = lock_for(account, share, old_path);
        std::shared_mutex& target_lock = lock_for(account, share, new_path);
        std::unique_lock first(std::less<>{}(&source_lock, &target_lock) ? source_lock : target_lock);
        std::unique_lock<std::shared_mutex> second;
        if (&source_lock != &target_lock) second = std::unique_lock(&source_lock == first.mutex() ? target_lock : source_lock);
        const std::filesystem::path root = share_root(account, share);
        ShareParent old_where = parent_in_share(root, old_path);
        ShareParent new_where = parent_in_share(root, new_path);
        if (!old_where.dir) disk_failure("cannot rename", disk_path(account, share, old_path));
        if (!new_where.dir) disk_failure("cannot rename into", disk_path(account, share, new_path), true);
        struct stat st {};
        if (::fstatat(old_where.dir.get(), old_where.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            S_ISDIR(st.st_mode) != directory || (!directory && !S_ISREG(st.st_mode))) {
            resource_not_found();  // the disk has something else there now: not share content
        }
        const unsigned flags = existing || same_entry ? 0 : RENAME_NOREPLACE;
        if (::renameat2(old_where.dir.get(), old_where.name.c_str(), new_where.dir.get(), new_where.name.c_str(), flags) != 0) {
            if (errno == EEXIST || errno == ENOTEMPTY || errno == EISDIR || errno == ENOTDIR) {
                fail(409, "ResourceAlreadyExists", "The specified resource already exists.");
            }
            disk_failure("cannot rename", disk_path(account, share, old_path));
        }
    });
    changes_.publish(account, share, old_path);
    changes_.publish(account, share, moved.path);
    return moved;
}

}  // namespace bai::storage
