// Share snapshots: Snapshot Share copies the share's rows under the snapshot's key and its files
// into a directory of its own, outside the share's (file_store.h says why a copy).
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <thread>
#include <vector>

#include "common/crypto/random_id.h"
#include "fake_storage/engine/file_store.h"
#include "fake_storage/engine/file_ranges.h"
#include "fake_storage/engine/names.h"
#include "fake_storage/engine/share_paths.h"
#include "fake_storage/engine/share_rows.h"
#include "fake_storage/engine/share_snapshot_names.h"
#include "fake_storage/engine/storage_error.h"

namespace bai::storage {
namespace fs = std::filesystem;
using namespace share_rows;

namespace {

// pread/pwrite of [at, end): what copy_file_range falls back to.
bool copy_run_by_hand(int from, int to, off_t at, off_t end) {
    std::vector<char> buffer(1 << 20);
    while (at < end) {
        const ssize_t n = ::pread(from, buffer.data(), static_cast<size_t>(std::min<off_t>(end - at, buffer.size())), at);
        if (n <= 0) return n == 0;
        if (::pwrite(to, buffer.data(), static_cast<size_t>(n), at) != n) return false;
        at += n;
    }
    return true;
}

// Copies the regular file `from` into the empty file `to`, keeping its holes (List Ranges reads
// them): a clone where the file system shares blocks between files (FICLONE: btrfs, XFS), else
// each run of data (SEEK_DATA, SEEK_HOLE) through copy_file_range. False, with errno, on failure.
bool copy_keeping_holes(int from, int to, off_t size) {
    if (::ioctl(to, FICLONE, from) == 0) return true;
    if (::ftruncate(to, size) != 0) return false;
    off_t at = 0;
    while (at < size) {
        off_t data = ::lseek(from, at, SEEK_DATA);
        if (data < 0) return errno == ENXIO;  // no data past `at`
        off_t hole = ::lseek(from, data, SEEK_HOLE);
        if (hole < 0 || hole > size) hole = size;
        off_t in = data, out = data;
        while (in < hole) {
            const ssize_t n = ::copy_file_range(from, &in, to, &out, static_cast<size_t>(hole - in), 0);
            if (n < 0) return copy_run_by_hand(from, to, in, hole);
            if (n == 0) break;
        }
        at = hole;
    }
    return true;
}

// The second `t` falls in: a share snapshot's time has no fraction.
time::TimePoint whole_second(time::TimePoint t) {
    return std::chrono::floor<std::chrono::seconds>(t);
}

// "Azure Files supports up to 200 share snapshots per share".
constexpr std::int64_t kMaxShareSnapshots = 200;

[[noreturn]] void snapshot_not_found() {
    fail(404, "ShareSnapshotNotFound", "The specified share snapshot does not exist.");
}

struct Copied {
    std::string path;
    std::uint64_t size;
};

}  // namespace

ShareInfo FileStore::snapshot_share(const std::string& account, const std::string& share,
                                    const std::optional<Metadata>& metadata) {
    if (is_share_snapshot_key(share)) {
        fail(400, "ShareSnapshotOperationNotSupported", "The operation is not supported on a share snapshot.");
    }
    // What a node's processes wrote into the share is in the snapshot.
    bool followed = false;
    if (followed_count_.load() > 0) {
        std::lock_guard guard(followed_mutex_);
        followed = followed_.contains({account, share});
    }
    if (followed) adopt_disk_changes(account, share, "", /*whole_subtree=*/true);
    note_share_snapshot();  // changes from now on are told apart from those before it

    const fs::path root = share_root(account, share);
    for (int attempt = 0;; ++attempt) {
        const time::TimePoint taken = whole_second(time::now());
        const std::string snapshot = share_snapshot_name(taken);
        const std::string key = share_snapshot_key(share, snapshot);
        const fs::path scratch = files_.root() / "tmp" / ("snapshot-" + crypto::random_hex(8));
        const fs::path target = share_root(account, key);
        bool taken_already = false;
        bool placed = false;
        ShareInfo out;
        try {
            // One transaction: no write of the share's rows lands while its files are copied, and
            // a Put Range whose row is written but whose bytes are not yet is applied to the copy
            // from its journal.
            db_.transaction([&](db::Database& db) {
                auto base = find_share(db, account, share);
                if (!base) share_not_found();
                if (find_share(db, account, key)) {
                    taken_already = true;
                    return;
                }
                auto count = db.prepare("SELECT count(*) FROM shares WHERE account = ?1 AND name > ?2 AND name < ?3");
                count.bind(1, account).bind(2, share + "/").bind(3, share + "0");  // "SHARE/..." ('0' follows '/')
                count.step();
                if (count.column_int(0) >= kMaxShareSnapshots) {
                    fail(409, "ShareSnapshotCountExceeded", "The total number of snapshots for the share is over the limit.");
                }
                std::vector<std::pair<std::string, bool>> entries;  // path, is_dir
                auto q = db.prepare("SELECT path, is_dir FROM share_entries WHERE account = ?1 AND share = ?2");
                q.bind(1, account).bind(2, share);
                while (q.step()) entries.emplace_back(q.column_text(0), q.column_int(1) != 0);
                // Parents before their children.
                std::sort(entries.begin(), entries.end(),
                          [](const auto& a, const auto& b) { return a.first.size() < b.first.size(); });
                fs::create_directories(scratch);
                std::vector<Copied> copied;
                for (const auto& [path, is_dir] : entries) {
                    const fs::path into = scratch / path;
                    if (is_dir) {
                        if (::mkdir(into.c_str(), 0755) != 0 && errno != EEXIST) io_failure("cannot create", into);
                        continue;
                    }
                    std::shared_lock lock(lock_for(account, share, path));
                    ShareFd from = open_regular_in_share(root, path, O_RDONLY);
                    if (!from) continue;  // gone from the disk: the next read of the share drops its row
                    struct stat st {};
                    ShareFd to(::open(into.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
                    if (!to || ::fstat(from.get(), &st) != 0 || !copy_keeping_holes(from.get(), to.get(), st.st_size)) {
                        io_failure("cannot copy into a snapshot", into);
                    }
                    copied.push_back({path, static_cast<std::uint64_t>(st.st_size)});
                }
                auto pending = db.prepare(
                    "SELECT path, offset, content_id, data FROM pending_ranges WHERE account = ?1 AND share = ?2"
                    " ORDER BY id");
                pending.bind(1, account).bind(2, share);
                while (pending.step()) {
                    ShareFd to(::open((scratch / pending.column_text(0)).c_str(), O_WRONLY | O_CLOEXEC));
                    if (!to) continue;
                    const off_t offset = static_cast<off_t>(pending.column_int(1));
                    const std::string content_id = pending.column_text(2);
                    if (content_id.empty()) {
                        const std::string data = pending.column_text(3);
                        if (::pwrite(to.get(), data.data(), data.size(), offset) != static_cast<ssize_t>(data.size())) {
                            io_failure("cannot write into a snapshot", scratch / pending.column_text(0));
                        }
                    } else {
                        // A range journaled in a block file: its bytes at `offset` in the copy.
                        ShareFd from(files_.open(account, ContentKind::block, content_id));
                        struct stat st {};
                        if (from && ::fstat(from.get(), &st) == 0) {
                            std::vector<char> buffer(1 << 20);
                            for (off_t at = 0; at < st.st_size;) {
                                const ssize_t n = ::pread(from.get(), buffer.data(), buffer.size(), at);
                                if (n <= 0 || ::pwrite(to.get(), buffer.data(), static_cast<size_t>(n), offset + at) != n) {
                                    io_failure("cannot write into a snapshot", scratch / pending.column_text(0));
                                }
                                at += n;
                            }
                        }
                    }
                }

                for (const Copied& c : copied) ::chmod((scratch / c.path).c_str(), 0444);  // a snapshot is read-only

                out = *base;
                out.snapshot = snapshot;
                out.lease = {};
                if (metadata) {
                    out.metadata = *metadata;
                    out.etag = new_etag();
                    out.last_modified = time::now();
                }
                db.prepare(
                      "INSERT INTO shares(account, name, etag, created, last_modified, metadata, quota)"
                      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)")
                    .bind(1, account)
                    .bind(2, key)
                    .bind(3, out.etag)
                    .bind(4, time::to_ticks(taken))
                    .bind(5, time::to_ticks(out.last_modified))
                    .bind(6, metadata_to_json(out.metadata))
                    .bind(7, out.quota_gib)
                    .run();
                db.prepare(
                      "INSERT INTO share_entries(account, share, path, parent, name, is_dir, size, etag,"
                      " last_modified, creation_time, last_write_time, change_time, attributes, content, metadata, ranges,"
                      " permission_key)"
                      " SELECT account, ?3, path, parent, name, is_dir, size, etag, last_modified, creation_time,"
                      " last_write_time, change_time, attributes, content, metadata, ranges, permission_key"
                      " FROM share_entries"
                      " WHERE account = ?1 AND share = ?2")
                    .bind(1, account)
                    .bind(2, share)
                    .bind(3, key)
                    .run();
                // The bytes copied are what the snapshot holds (a mount's direct writes may be
                // ahead of their rows).
                auto size = db.prepare(
                    "UPDATE share_entries SET size = ?4, ranges = '' WHERE account = ?1 AND share = ?2 AND path = ?3 AND size <> ?4");
                for (const Copied& c : copied) {
                    size.bind(1, account).bind(2, key).bind(3, c.path).bind(4, static_cast<std::int64_t>(c.size)).run();
                    size.reset();
                }
                fs::create_directories(target.parent_path());
                fs::rename(scratch, target);
                placed = true;
            });
        } catch (...) {
            std::error_code ec;
            fs::remove_all(scratch, ec);
            if (placed) fs::remove_all(target, ec);
            throw;
        }
        std::error_code ec;
        fs::remove_all(scratch, ec);
        if (!taken_already) return out;
        // Another snapshot of the share has this second: the next one is this one's.
        if (attempt >= 3) fail(409, "ShareSnapshotInProgress", "A share snapshot is in progress. Retry later.");
        std::this_thread::sleep_until(std::chrono::system_clock::time_point(
            std::chrono::duration_cast<std::chrono::system_clock::duration>((taken + std::chrono::seconds(1)).time_since_epoch())));
    }
}

ShareInfo FileStore::get_share_snapshot(const std::string& account, const std::string& share,
                                        const std::string& snapshot) {
    std::optional<ShareInfo> s;
    db_.read([&](db::Database& db) {
        require_share(db, account, share);
        s = find_share(db, account, share_snapshot_key(share, snapshot));
    });
    if (!s) snapshot_not_found();
    return *s;
}

void FileStore::remove_snapshot_leftovers() {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(files_.root() / "tmp", ec)) {
        const std::string name = entry.path().filename().string();
        if (entry.is_directory(ec) && (name.starts_with("snapshot-") || name.starts_with("share-"))) {
            fs::remove_all(entry.path(), ec);
        }
    }
    for (const auto& account : fs::directory_iterator(files_.root(), ec)) {
        const fs::path snapshots = account.path() / "share-snapshots";
        if (!fs::is_directory(snapshots, ec)) continue;
        const std::string account_name = account.path().filename().string();
        for (const auto& share : fs::directory_iterator(snapshots, ec)) {
            for (const auto& taken : fs::directory_iterator(share.path(), ec)) {
                const std::string key =
                    share_snapshot_key(share.path().filename().string(), taken.path().filename().string());
                bool kept = false;
                db_.read([&](db::Database& db) { kept = find_share(db, account_name, key).has_value(); });
                if (!kept) fs::remove_all(taken.path(), ec);
            }
            fs::remove(share.path(), ec);  // if empty
        }
    }
}

}  // namespace bai::storage
