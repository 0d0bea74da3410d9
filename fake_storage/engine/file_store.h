// Azure Files: shares, directories and files. Content lives as plain files and directories under
// DIR/storage/ACCOUNT/shares/SHARE/ (what the FUSE mounts and jobs see); properties, metadata and
// the case-insensitive name index live in SQLite. Put Range is applied through a journal
// (pending_ranges) so that a crash never leaves a range half written.
#pragma once

#include <sys/types.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <mutex>
#include <optional>
#include <utility>
#include <shared_mutex>
#include <string>
#include <vector>

#include "common/db/database.h"
#include "fake_storage/engine/blob_store.h"
#include "fake_storage/engine/store_changes.h"
#include "fake_storage/engine/content_files.h"
#include "fake_storage/engine/file_ranges.h"
#include "fake_storage/engine/properties.h"

namespace bai::storage {

struct ShareInfo {
    std::string name;
    std::string etag;
    time::TimePoint last_modified;
    Metadata metadata;
    std::int64_t quota_gib = 5120;
    Lease lease;  // Lease Share's (x-ms-version 2020-02-10)
    std::string snapshot;  // a share snapshot's time ("2020-01-15T23:54:16.0000000Z"); "" for the share
    std::string deleted_version;  // a soft-deleted share's version (share_snapshot_names.h); "" for a live one
    time::TimePoint created;
    std::string access_tier;  // "" for the default, TransactionOptimized
    time::TimePoint access_tier_changed;  // when a tier was last set; `created` when never
    std::vector<SignedIdentifier> identifiers;  // Set Share ACL's stored access policies
};

struct SmbProperties {
    time::TimePoint creation_time;
    time::TimePoint last_write_time;
    time::TimePoint change_time;
    std::string attributes;  // "Directory", "Archive", "ReadOnly | Archive", ...
};

// Changes to SMB properties; absent fields are preserved.
struct SmbUpdate {
    std::optional<time::TimePoint> creation_time;
    std::optional<time::TimePoint> last_write_time;
    std::optional<time::TimePoint> change_time;
    std::optional<std::string> attributes;
    // x-ms-file-permission-key, or the key of x-ms-file-permission ("" for the default).
    std::optional<std::string> permission_key;
};

struct ShareEntry {
    std::int64_t id = 0;  // the share root is 0
    std::string path;     // relative to the share root, case as created
    std::string name;
    bool is_dir = false;
    std::uint64_t size = 0;
    std::string etag;
    time::TimePoint last_modified;
    SmbProperties smb;
    ContentSettings content;
    Metadata metadata;
    Lease lease;  // Lease File's (files only; never on a share snapshot's)
    struct Copy {
        std::string id;      // "" for a file no Copy File made
        std::string source;  // the x-ms-copy-source URL, as sent
        std::uint64_t bytes = 0;
        time::TimePoint completed;
    } copy;  // the Copy File that made it (copies here complete at once: x-ms-copy-status success)
    // The written ranges and their changes (file_ranges.h's text); "" when unknown (a mount wrote
    // the file: its holes on disk say).
    std::string ranges;
    // x-ms-file-permission-key: "" for the share's default permission (file_permissions.h).
    std::string permission_key;
};
std::string file_copy_to_json(const ShareEntry::Copy& copy);  // "" for none
ShareEntry::Copy file_copy_from_json(const std::string& text);

// The bytes a copy reads (Copy File's source: a file, or a blob): `size` of them through `read`
// (as pread: fewer only at the end, -1 on failure), and the ranges the source has written
// (file_ranges.h's text; "" when unknown: the copy's bytes on disk then say).
struct CopyFrom {
    std::uint64_t size = 0;
    std::function<ssize_t(char* into, size_t size, std::uint64_t offset)> read;
    std::string ranges;
};

struct SharePage {
    std::vector<ShareInfo> shares;
    std::string next_marker;
};

struct DirectoryPage {
    ShareEntry directory;
    std::vector<ShareEntry> entries;
    std::string next_marker;
};

struct OpenFile;
// What a copy of an open file reads (its descriptor stays open while the copy is made).
CopyFrom copy_from(const OpenFile& file);

struct OpenFile {
    ShareEntry info;
    int fd = -1;
    OpenFile() = default;
    OpenFile(OpenFile&& other) noexcept : info(std::move(other.info)), fd(other.fd) { other.fd = -1; }
    OpenFile& operator=(OpenFile&&) = delete;
    OpenFile(const OpenFile&) = delete;
    ~OpenFile();
};

inline constexpr std::uint64_t kMaxRangeSize = 4 * 1024 * 1024;
inline constexpr std::uint64_t kMaxFileSize = 4ull * 1024 * 1024 * 1024 * 1024;  // 4 TiB

class FileStore {
public:
    FileStore(db::Database& db, ContentFiles& files);

    // `access_tier`: TransactionOptimized (the default), Hot or Cool.
    ShareInfo create_share(const std::string& account, const std::string& name,
                           std::optional<std::int64_t> quota_gib, const Metadata& metadata,
                           const std::optional<std::string>& access_tier = std::nullopt);
    ShareInfo get_share(const std::string& account, const std::string& name);
    // A leased share is deleted only with its lease id (412 LeaseIdMissing, ...); an id where
    // none is held is 412 LeaseNotPresentWithContainerOperation, as for a container. A share with
    // snapshots only `with_snapshots` (409 ShareHasSnapshots), and then only when none of them is
    // leased (409 DeleteShareWhenSnapshotLeased). `name` may be a snapshot's key (snapshot_key).
    // `keep_deleted` (the account's share soft delete on): the share and its snapshots are kept,
    // out of sight, as a deleted share that undelete_share brings back (share_soft_delete.cpp).
    void delete_share(const std::string& account, const std::string& name,
                      const std::optional<std::string>& lease_id = std::nullopt, bool with_snapshots = false,
                      bool keep_deleted = false);
    // Undelete Share: the deleted share `deleted_name` of `version` becomes the share `name`
    // again, with its files, metadata, properties and snapshots, a new ETag and Last-Modified, and
    // no lease. 409 ShareAlreadyExists when `name` exists; 404 ShareNotFound when no such deleted
    // share is kept (or it was deleted before `kept_since`: its retention is over).
    ShareInfo undelete_share(const std::string& account, const std::string& name, const std::string& deleted_name,
                             const std::string& version, time::TimePoint kept_since);
    // Deleted shares whose retention is over (deleted before `kept_since`) go for good.
    void purge_deleted_shares(const std::string& account, time::TimePoint kept_since);

    // Share snapshots (share_snapshots.cpp). A snapshot is stored as a share of its own whose
    // name is its key, "SHARE/TIME" (a name no share can have): its row in shares, its entries'
    // rows and a copy of its files under ACCOUNT/share-snapshots/SHARE/TIME. So every read of a
    // share serves a snapshot given its key; the File service refuses writes to one.
    // Snapshot Share: the share as it is now, its metadata `metadata` when given (else the
    // share's). The snapshot's time is the second it was taken (the next free one when another
    // snapshot of the share has this second).
    ShareInfo snapshot_share(const std::string& account, const std::string& share,
                             const std::optional<Metadata>& metadata);
    // The share's snapshot: 404 ShareNotFound without the share, ShareSnapshotNotFound without it.
    ShareInfo get_share_snapshot(const std::string& account, const std::string& share, const std::string& snapshot);
    // The share's properties change only where a lease id given is the held lease's.
    ShareInfo set_share_metadata(const std::string& account, const std::string& name,
                                 const Metadata& metadata, const std::optional<std::string>& lease_id = std::nullopt);
    ShareInfo set_share_quota(const std::string& account, const std::string& name,
                              std::int64_t quota_gib, const std::optional<std::string>& lease_id = std::nullopt);
    // Set Share Properties: what is given changes (a tier set anew has a new change time).
    ShareInfo set_share_properties(const std::string& account, const std::string& name,
                                   std::optional<std::int64_t> quota_gib, const std::optional<std::string>& access_tier,
                                   const std::optional<std::string>& lease_id = std::nullopt);
    // Set Share ACL: the share's stored access policies (what a share or file SAS's `si` names).
    ShareInfo set_share_acl(const std::string& account, const std::string& name,
                            const std::vector<SignedIdentifier>& identifiers,
                            const std::optional<std::string>& lease_id = std::nullopt);
    // Lease Share: the lease state machine of lease.h on the share (no new ETag).
    std::pair<LeaseOutcome, ShareInfo> lease_share(const std::string& account, const std::string& name,
                                                   const LeaseRequest& request);
    // With options.snapshots, each share's snapshots too, oldest first, before the share itself
    // (as the service lists them).
    // With `deleted`, the deleted shares too (deleted_version set), each before the share of its
    // name, if any.
    SharePage list_shares(const std::string& account, const ListOptions& options, bool deleted = false);
    std::uint64_t share_usage(const std::string& account, const std::string& name);

    ShareEntry create_directory(const std::string& account, const std::string& share,
                                const std::string& path, const Metadata& metadata,
                                const SmbUpdate& smb);
    // The directory at `path` ("" is the share root). 404 ResourceNotFound when it is missing or
    // a file.
    ShareEntry get_directory(const std::string& account, const std::string& share,
                             const std::string& path);
    void delete_directory(const std::string& account, const std::string& share,
                          const std::string& path);
    ShareEntry set_directory_metadata(const std::string& account, const std::string& share,
                                      const std::string& path, const Metadata& metadata);
    ShareEntry set_directory_properties(const std::string& account, const std::string& share,
                                        const std::string& path, const SmbUpdate& smb);
    DirectoryPage list_directory(const std::string& account, const std::string& share,
                                 const std::string& path, const ListOptions& options);

    // Creates or replaces the file with `size` bytes of zeros. `create_new_only`: an existing
    // file is refused (403 AuthorizationPermissionMismatch: a SAS that may create, not replace).
    // Every write of a file (this one of an existing file, the ranges, properties, metadata, delete
    // and rename) takes `lease_id`, x-ms-lease-id: a file with an active lease is written only
    // with its id (412 LeaseIdMissing, LeaseIdMismatchWithFileOperation), and an id where no
    // lease is active is 412 LeaseNotPresentWithFileOperation; checked in the write's transaction.
    ShareEntry create_file(const std::string& account, const std::string& share,
                           const std::string& path, std::uint64_t size,
                           const ContentSettings& content, const Metadata& metadata,
                           const SmbUpdate& smb, bool create_new_only = false,
                           const std::optional<std::string>& lease_id = std::nullopt);
    ShareEntry get_file(const std::string& account, const std::string& share,
                        const std::string& path);
    OpenFile open_file(const std::string& account, const std::string& share,
                       const std::string& path);
    ShareEntry put_range(const std::string& account, const std::string& share,
                         const std::string& path, std::uint64_t offset, ContentWriter& data,
                         const std::optional<std::string>& lease_id = std::nullopt);
    ShareEntry clear_range(const std::string& account, const std::string& share,
                           const std::string& path, std::uint64_t offset, std::uint64_t length,
                           const std::optional<std::string>& lease_id = std::nullopt);
    ShareEntry set_file_properties(const std::string& account, const std::string& share,
                                   const std::string& path, std::optional<std::uint64_t> size,
                                   const std::optional<ContentSettings>& content,
                                   const SmbUpdate& smb,
                                   const std::optional<std::string>& lease_id = std::nullopt);
    ShareEntry set_file_metadata(const std::string& account, const std::string& share,
                                 const std::string& path, const Metadata& metadata,
                                 const std::optional<std::string>& lease_id = std::nullopt);
    void delete_file(const std::string& account, const std::string& share,
                     const std::string& path, const std::optional<std::string>& lease_id = std::nullopt);
    // Copy File: the file at `path` becomes a copy of the bytes of `source` (a file of this store,
    // any account, or a blob), made as Create File makes a file (a new inode renamed into place, the
    // index's row in one transaction) with `content` and `metadata`, `smb` applied over
    // `source_smb`, and `copy` recorded. An existing file is replaced only without an active
    // lease other than `lease_id` (as every write); a directory there is 409 ResourceAlreadyExists;
    // `create_new_only` refuses an existing file (a SAS of 'c' alone).
    ShareEntry copy_file(const std::string& account, const std::string& share, const std::string& path,
                         const CopyFrom& source, const ContentSettings& content, const Metadata& metadata,
                         const SmbProperties& source_smb, const SmbUpdate& smb, ShareEntry::Copy copy,
                         bool create_new_only, const std::optional<std::string>& lease_id);
    // Lease File: the lease state machine of lease.h on the file (no new ETag), as Azure Files
    // leases files: infinite only (x-ms-lease-duration -1, else 400 InvalidHeaderValue), no
    // renew, and a break that breaks at once.
    std::pair<LeaseOutcome, ShareEntry> lease_file(const std::string& account, const std::string& share,
                                                   const std::string& path, const LeaseRequest& request);
    // True when the file at `path` (spelled as on disk) has an active lease: a share mount
    // refuses to write it (it has no lease id to give).
    bool file_leased(const std::string& account, const std::string& share, const std::string& path);
    // Rename File and Rename Directory: the file (or, with `directory`, the directory and all it
    // holds) at `from` takes the path `to` in the same share, keeping its content, properties and
    // metadata (unless `options` sets them) and its file ID; a new ETag and Last-Modified.
    struct RenameOptions {
        // A file at `to` is replaced only with this (and one with the ReadOnly attribute only with
        // ignore_read_only too); a directory there never is.
        bool replace_if_exists = false;
        bool ignore_read_only = false;
        std::optional<Metadata> metadata;
        SmbUpdate smb;
        std::optional<std::string> content_type;
        // x-ms-source-lease-id and x-ms-destination-lease-id: a leased source, or a leased file
        // replaced at `to`, needs its lease's id (as every write of a leased file).
        std::optional<std::string> source_lease_id;
        std::optional<std::string> destination_lease_id;
    };
    ShareEntry rename(const std::string& account, const std::string& share, const std::string& from,
                      const std::string& to, bool directory, const RenameOptions& options);
    // Get Ranges: the file's written ranges within [first, last] (file_ranges.h; for a file a
    // mount wrote, the blocks holding data on disk). With `previous`, a snapshot's key of the
    // share (prevsharesnapshot): what changed since that snapshot's copy of the file, written
    // ranges and cleared ones.
    std::vector<FileRanges::Listed> list_ranges(const std::string& account, const std::string& share,
                                                const std::string& path, std::uint64_t first, std::uint64_t last,
                                                const std::string& previous = "");

    // Create Permission: the share keeps `sddl` under `key` (the same permission again: the same
    // row). 404 ShareNotFound. A snapshot's key names its share's permissions.
    void create_permission(const std::string& account, const std::string& share, const std::string& key,
                           const std::string& sddl);
    // Get Permission: the share's permission of `key`; nullopt when it holds none.
    std::optional<std::string> get_permission(const std::string& account, const std::string& share,
                                              const std::string& key);

    std::filesystem::path share_root(const std::string& account, const std::string& share) const;
    // DIR/storage: every share's directory is ACCOUNT/shares/SHARE under it.
    std::filesystem::path storage_root() const { return files_.root(); }
    // Brings the index up to what is on disk under `path` (and its ancestors): files and
    // directories written into the share's directory by other means than this store (a job's
    // processes) get entries, changed files a new size, ETag and Last-Modified, vanished ones go.
    // Returns the number of entries added, changed or removed. `whole_subtree` false: only the
    // entries directly in `path` (what a listing of it shows).
    size_t adopt_disk_changes(const std::string& account, const std::string& share, const std::string& path,
                              bool whole_subtree = true);
    // The same for the one entry at `path`, spelled as on disk (its ancestors indexed as needed):
    // added, updated or removed as the disk says; `written` forces a new ETag and Last-Modified (content written
    // without a size change); `subtree` also walks it when it is a directory (one renamed into
    // place). What the share mounts call after each change.
    size_t adopt_entry(const std::string& account, const std::string& share, const std::string& path, bool written,
                       bool subtree, const void* origin = nullptr);
    // The file at `path` (spelled as on disk) was written (or truncated) on disk: its row gets the new size, a new ETag
    // and Last-Modified in one statement; adopt_entry when it has no row yet.
    void note_write(const std::string& account, const std::string& share, const std::string& path,
                    const void* origin = nullptr);

    // A file (by device and inode) that a share mount lets the kernel write without telling the
    // store about each write (FUSE passthrough), from its open to its close: while it is open,
    // get_file and list_directory first bring its entry up to the disk (size, ETag, Last-Modified).
    void begin_direct_writes(dev_t device, ino_t inode);
    void end_direct_writes(dev_t device, ino_t inode);
    // What get_file does for such a file, for the mount that let it be written (`origin`, as for
    // note_write): at its fsync and release (a flush too where the kernel sends one).
    void catch_up_direct_writes(const std::string& account, const std::string& share, const std::string& path,
                                const void* origin);

    // A share whose directory others write while the returned token lives (a node's bind mount
    // of it): each operation on a path first brings the index's entry for it up to the disk
    // (adopt_entry when they differ), and a listing its directory's entries (adopt_disk_changes
    // of that directory), so REST sees what a job wrote without a mount telling the store. When
    // the share's last token goes, the whole share is adopted once.
    std::shared_ptr<void> follow_disk_writes(const std::string& account, const std::string& share);

    // Every change made or indexed here, published after it is done (`origin`: the mount that
    // made it, passed to adopt_entry and note_write; null for the others).
    StoreChanges& changes() { return changes_; }
    // Applies Put Range bodies that were journaled but not applied when the emulator stopped, and
    // removes what a stop left of share snapshots being taken or shares being deleted.
    size_t recover();
    std::vector<std::string> live_content_ids();

private:
    void soft_delete_share(const std::string& account, const std::string& name,
                           const std::optional<std::string>& lease_id, bool with_snapshots);
    // Scratch copies of snapshots and trash of deleted shares in tmp/, and snapshot directories
    // whose rows were never committed (share_snapshots.cpp).
    void remove_snapshot_leftovers();
    // Inside the caller's transaction: deletes the rows of a share (a snapshot's, a deleted
    // share's) and moves its directory into tmp/, appended to `trash` for the caller to remove
    // once the transaction has committed.
    void drop_share(db::Database& db, const std::string& account, const std::string& key,
                    std::vector<std::filesystem::path>& trash);
    StoreChanges changes_;
    std::shared_mutex& lock_for(const std::string& account, const std::string& share,
                                const std::string& path);
    std::filesystem::path disk_path(const std::string& account, const std::string& share,
                                    const std::string& stored_path) const;
    // The regular file at `stored_path` in the share's directory, opened with `flags` without
    // following links (share_paths.h); -1 with errno set when it is not there or not a file.
    int open_regular(const std::string& account, const std::string& share, const std::string& stored_path,
                     int flags) const;
    ShareInfo update_share(const std::string& account, const std::string& name,
                           const std::function<void(ShareInfo&)>& change);
    ShareEntry update_entry(const std::string& account, const std::string& share,
                            const std::string& path, bool want_dir,
                            const std::function<void(ShareEntry&)>& change);
    // Writes a journaled range into its file, then drops the journal entry. The bytes come from
    // `inline_data` when they were small, else from the content file `content_id`.
    // False when the file could not be opened (gone, or not share content).
    bool apply_range(const std::string& account, const std::string& share,
                     const std::string& stored_path, std::uint64_t offset,
                     const std::string& content_id, const std::string& inline_data,
                     std::int64_t pending_id);

    // The files written directly now (begin_direct_writes), by device and inode. Taken before a
    // row is read: a file whose close comes between the two is still caught up, since its mount
    // catches the row up before it ends the file's direct writes.
    using DirectFiles = std::set<std::pair<dev_t, ino_t>>;
    DirectFiles direct_files_now();
    // True when `entry` is one of `direct` whose disk size or time moved past its row: the row is
    // then updated.
    bool caught_up_direct_writes(const std::string& account, const std::string& share, const ShareEntry& entry,
                                 const DirectFiles& direct, const void* origin = nullptr);
    // The file's row as it is (get_file without catching up).
    ShareEntry get_file_row(const std::string& account, const std::string& share, const std::string& path);

    db::Database& db_;
    ContentFiles& files_;
    std::array<std::shared_mutex, 64> file_locks_;
    // What follow_disk_writes asked: the entry of `path` (REST's spelling) and, with `listing`,
    // the entries directly in it, up to the disk; nothing for a share no one writes on disk.
    void sync_from_disk(const std::string& account, const std::string& share, const std::string& path,
                        bool listing = false);
    std::mutex followed_mutex_;
    std::map<std::pair<std::string, std::string>, int> followed_;  // shares written on disk: tokens
    std::atomic<size_t> followed_count_{0};
    std::mutex direct_mutex_;
    std::map<std::pair<dev_t, ino_t>, int> direct_writes_;  // open counts
    std::atomic<size_t> direct_files_{0};
};

}  // namespace bai::storage
