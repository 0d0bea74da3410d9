// The bytes of blobs and staged blocks: immutable files under DIR/storage/ACCOUNT/{blobs,blocks}/,
// written first in DIR/storage/tmp/ and renamed into place once complete, so that a reader or a
// crash never sees a partial one. Which files are live is decided by the metadata in SQLite.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "common/crypto/digest.h"

namespace bai::storage {

enum class ContentKind { blob, block };

class ContentFiles;

// A file being written. Removed on destruction unless committed.
class ContentWriter {
public:
    ~ContentWriter();
    ContentWriter(const ContentWriter&) = delete;
    ContentWriter& operator=(const ContentWriter&) = delete;

    void append(std::string_view bytes);
    // Appends `length` bytes of `fd` from `offset` (copy_file_range where the kernel can).
    void append_from(int fd, std::uint64_t offset, std::uint64_t length);
    std::uint64_t size() const { return size_; }
    // The MD5 of what was appended (only when asked for at creation); ends the digest.
    std::string md5();

private:
    friend class ContentFiles;
    ContentWriter(int fd, std::filesystem::path path, bool with_md5);
    int fd_;
    std::filesystem::path path_;
    std::uint64_t size_ = 0;
    std::unique_ptr<crypto::Md5> md5_;
    bool committed_ = false;
};

class ContentFiles {
public:
    // `durable`: fsync content before it is committed (power-loss safety; slower).
    ContentFiles(std::filesystem::path root, bool durable);

    std::unique_ptr<ContentWriter> begin(bool with_md5);
    // Closes the writer and moves it into place; returns the id of the new content file.
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
    std::filesystem::path root_;
    std::filesystem::path tmp_;
    bool durable_;
};

}  // namespace bai::storage
