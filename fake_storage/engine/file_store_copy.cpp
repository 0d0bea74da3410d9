// FileStore::copy_file: Copy File, a new file holding the source's bytes, made in one step, and
// the copy properties kept with it.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <mutex>
#include <nlohmann/json.hpp>
#include <shared_mutex>
#include <vector>

#include "common/crypto/random_id.h"
#include "fake_storage/engine/file_store.h"
#include "fake_storage/engine/names.h"
#include "fake_storage/engine/share_paths.h"
#include "fake_storage/engine/share_rows.h"
#include "fake_storage/engine/storage_error.h"

namespace bai::storage {

std::string file_copy_to_json(const ShareEntry::Copy& copy) {
    if (copy.id.empty()) return "";
    return nlohmann::json{{"id", copy.id},
                          {"source", copy.source},
                          {"bytes", copy.bytes},
                          {"completed", time::to_ticks(copy.completed)}}
        .dump();
}

ShareEntry::Copy file_copy_from_json(const std::string& text) {
    ShareEntry::Copy copy;
    if (text.empty()) return copy;
    nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (!j.is_object()) return copy;
    copy.id = j.value("id", std::string());
    copy.source = j.value("source", std::string());
    copy.bytes = j.value("bytes", std::uint64_t{0});
    copy.completed = time::from_ticks(j.value("completed", std::int64_t{0}));
    return copy;
}

CopyFrom copy_from(const OpenFile& file) {
    const int fd = file.fd;
    return {file.info.size,
            [fd](char* into, size_t size, std::uint64_t offset) { return ::pread(fd, into, size, static_cast<off_t>(offset)); },
            file.info.ranges};
}

ShareEntry FileStore::copy_file(const std::string& account, const std::string& share, const std::string& path,
                                const CopyFrom& source, const ContentSettings& content, const Metadata& metadata,
                                const SmbProperties& source_smb, const SmbUpdate& smb, ShareEntry::Copy copy,
                                bool create_new_only, const std::optional<std::string>& lease_id) {
    using namespace share_rows;
    SplitPath p = split(path);
    sync_from_disk(account, share, p.parent);
    sync_from_disk(account, share, p.path);
    if (p.path.empty()) fail(400, "InvalidResourceName", "A file needs a name.");
    // The bytes first, into a new inode in tmp/ (same file system, swept at start): nothing of
    // the copy is in the share until its row is committed and it is renamed into place.
    namespace fs = std::filesystem;
    const fs::path fresh = files_.root() / "tmp" / crypto::random_hex(16);
    const int fd = ::open(fresh.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) io_failure("cannot create", fresh);
    bool written = ::ftruncate(fd, static_cast<off_t>(source.size)) == 0;
    std::vector<char> buffer(1 << 20);
    for (std::uint64_t at = 0; written && at < source.size;) {
        const ssize_t n = source.read(buffer.data(), static_cast<size_t>(std::min<std::uint64_t>(buffer.size(), source.size - at)), at);
        if (n <= 0) break;  // the source shrank meanwhile: the rest stays zeros
        // Blocks of zeros stay holes, so List Ranges of the copy names what the source held.
        constexpr size_t kBlock = 4096;
        for (size_t block = 0; written && block < static_cast<size_t>(n); block += kBlock) {
            const size_t length = std::min(kBlock, static_cast<size_t>(n) - block);
            const char* bytes = buffer.data() + block;
            if (std::all_of(bytes, bytes + length, [](char c) { return c == 0; })) continue;
            written = ::pwrite(fd, bytes, length, static_cast<off_t>(at + block)) == static_cast<ssize_t>(length);
        }
        at += static_cast<std::uint64_t>(n);
    }
    ::close(fd);
    if (!written) {
        ::unlink(fresh.c_str());
        io_failure("cannot write", fresh);
    }
    copy.bytes = source.size;
    copy.completed = time::now();
    ShareEntry e;
    try {
        db_.transaction([&](db::Database& db) {
            require_share(db, account, share);
            std::string parent = require_parent(db, account, share, p);
            auto existing = find_entry(db, account, share, p.path);
            if (existing && existing->is_dir) fail(409, "ResourceAlreadyExists", "The specified resource already exists.");
            if (existing && create_new_only) {
                fail(403, "AuthorizationPermissionMismatch",
                     "This request is not authorized to perform this operation using this permission.");
            }
            if (existing) check_lease_for_write(existing->lease, lease_id, time::now(), LeaseTarget::file);
            const time::TimePoint now = time::now();
            e.path = existing ? existing->path : (parent.empty() ? p.name : parent + "/" + p.name);
            e.name = existing ? existing->name : p.name;
            e.size = source.size;
            e.etag = new_etag();
            e.last_modified = now;
            e.smb = apply_smb(source_smb, smb);
            e.smb.change_time = now;
            e.content = content;
            e.metadata = metadata;
            e.copy = copy;
            // What the source has written is written in the copy (unknown when a mount wrote it).
            if (auto from = FileRanges::from_text(source.ranges)) {
                FileRanges ranges;
                const std::int64_t seq = next_file_change();
                for (const auto& [start, end] : from->written()) ranges.write(start, std::min(end, e.size), seq);
                e.ranges = ranges.to_text();
            }
            e.permission_key = smb.permission_key ? *smb.permission_key : "";
            std::unique_lock lock(lock_for(account, share, e.path));
            ShareParent where = parent_in_share(share_root(account, share), e.path);
            if (!where.dir || ::renameat(AT_FDCWD, fresh.c_str(), where.dir.get(), where.name.c_str()) != 0) {
                disk_failure("cannot create", disk_path(account, share, e.path), true);
            }
            if (existing) {
                e.id = existing->id;
                e.lease = existing->lease;
                save_entry(db, e);
            } else {
                insert_entry(db, account, share, parent, e);
            }
            db.prepare("UPDATE share_entries SET copy = ?2 WHERE id = ?1").bind(1, e.id).bind(2, file_copy_to_json(copy)).run();
        });
    } catch (...) {
        ::unlink(fresh.c_str());  // gone already when it was renamed into place
        throw;
    }
    changes_.publish(account, share, e.path);
    return e;
}

}  // namespace bai::storage
