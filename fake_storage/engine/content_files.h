// The bytes of blobs and staged blocks: immutable files under DIR/storage/ACCOUNT/{blobs,blocks}/,
// written first in DIR/storage/tmp/ and renamed into place once complete, so that a reader or a
// crash never sees a partial one. Which files are live is decided by the metadata in SQLite.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "common/crypto/crc64.h"
#include "common/crypto/digest.h"

namespace bai::storage {

enum class ContentKind { blob, block };

class ContentFiles;

// Content up to this size stays in memory and is stored inline in SQLite: creating a file costs
// far more than the bytes (about 300 us per 4 KiB file on the project's ext4 machines).
inline constexpr std::uint64_t kInlineLimit = 64 * 1024;

// Content being received. It stays in memory while it is small and spills into a file in
// DIR/storage/tmp/ beyond kInlineLimit; that file is removed on destruction unless committed.
class ContentWriter {
public:
    ~ContentWriter();
    ContentWriter(const ContentWriter&) = delete;
    ContentWriter& operator=(const ContentWriter&) = delete;

    void append(std::string_view bytes);
    // Appends `length` bytes of `fd` from `offset` (copy_file_range where the kernel can).
    void append_from(int fd, std::uint64_t offset, std::uint64_t length);
    std::uint64_t size() const { return size_; }
    // The MD5 of what was appended (only when asked for at creation): once asked for, nothing
    // more may be appended.
    std::string md5();
    // The CRC64 of what was appended (only when asked for at creation), 8 bytes.
    std::string crc64() const { return crc64_ ? crc64_->bytes() : std::string(); }
    bool in_memory() const { return fd_ < 0; }
    const std::string& bytes() const { return buffer_; }  // while in_memory()

private:
    friend class ContentFiles;
    ContentWriter(std::filesystem::path spill_dir, bool with_md5, bool with_crc64);
    void spill();

    // Bytes arrive in pieces (what one read of the connection brought, up to 256 KiB, or one
    // FUSE write): they are gathered and written in large writes.
    void flush_pending();

    std::filesystem::path spill_dir_;
    std::string pending_;
    int fd_ = -1;
    std::filesystem::path path_;
    std::string buffer_;
    std::uint64_t size_ = 0;
    std::unique_ptr<crypto::Md5> md5_;
    std::string md5_digest_;
    std::unique_ptr<crypto::Crc64> crc64_;
    bool committed_ = false;
};

class ContentFiles {
public:
    // `durable`: fsync content before it is committed (power-loss safety; slower).
    ContentFiles(std::filesystem::path root, bool durable);

    std::unique_ptr<ContentWriter> begin(bool with_md5, bool with_crc64 = false);
    // The directory where content being received is spilled (on the same file system as the
    // content files; emptied at start). Others may stage their own temporary files there.
    const std::filesystem::path& temporary_dir() const { return tmp_; }
    // Closes the writer and moves it into place (writing it out first when it is in memory);
    // returns the id of the new content file.
    std::string commit(ContentWriter& writer, const std::string& account, ContentKind kind);
    // A new id for `account` naming the same bytes as `id` (a hard link: content is immutable).
    std::string link(const std::string& account, ContentKind kind, const std::string& id);
    std::filesystem::path path(const std::string& account, ContentKind kind,
                               const std::string& id) const;
    // Opens a content file read-only; -1 when it does not exist.
    int open(const std::string& account, ContentKind kind, const std::string& id) const;
    void remove(const std::string& account, ContentKind kind, const std::string& id) const;

    // Removes the files of every account that `live` (ids) does not name, and what tmp/ holds:
    // the leftovers of a crash between writing content and committing its metadata.
    size_t sweep(const std::set<std::string>& live) const;

    const std::filesystem::path& root() const { return root_; }

private:
    // Creates the directory of `path` once per process (commits are frequent; mkdir is not free).
    void ensure_parent(const std::filesystem::path& path);

    std::filesystem::path root_;
    std::filesystem::path tmp_;
    bool durable_;
    std::mutex dirs_mutex_;
    std::set<std::filesystem::path> known_dirs_;
};

}  // namespace bai::storage
