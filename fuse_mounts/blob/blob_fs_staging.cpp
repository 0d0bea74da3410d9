// Files open for writing through a blob mount: their bytes staged until they are committed as a
// whole blob. A small file is staged in memory (a memfd): most files written through a mount are
// small (an unpacked dataset, shards' indexes, logs), and an unnamed file on the disk costs an
// inode allocated and freed per file. One that grows past kMemoryStagingBytes moves to an unnamed
// file in the staging directory.
#define FUSE_USE_VERSION 312
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <cerrno>
#include <system_error>

#include "fake_storage/engine/storage_error.h"
#include "fuse_mounts/blob/blob_fs_state.h"

namespace bai::mounts::blob_fs {

namespace {

[[noreturn]] void fail_staging(int error) {
    throw std::system_error(error ? error : EIO, std::generic_category(), "cannot stage a file");
}

int staging_fd(State& s, bool in_memory) {
    const int fd = in_memory ? ::memfd_create("bai-blob-staging", MFD_CLOEXEC)
                             : ::open(s.options.staging_dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) fail_staging(errno);
    return fd;
}

void write_all_at(int fd, const char* bytes, std::uint64_t size, std::uint64_t at) {
    while (size > 0) {
        ssize_t n = ::pwrite(fd, bytes, size, static_cast<off_t>(at));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) fail_staging(n < 0 ? errno : EIO);
        bytes += n;
        size -= static_cast<std::uint64_t>(n);
        at += static_cast<std::uint64_t>(n);
    }
}

// `length` bytes of `in` at `in_at` into `out` at `out_at`: in the kernel where it can (not
// between two file systems: a content file and a memfd), else through a buffer.
void copy_range(int in, std::uint64_t in_at, int out, std::uint64_t out_at, std::uint64_t length) {
    auto from = static_cast<loff_t>(in_at);
    auto to = static_cast<loff_t>(out_at);
    while (length > 0) {
        ssize_t n = ::copy_file_range(in, &from, out, &to, length, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        length -= static_cast<std::uint64_t>(n);
    }
    std::vector<char> buffer(std::min<std::uint64_t>(length, 1 << 20));
    while (length > 0) {
        ssize_t n = ::pread(in, buffer.data(), std::min<std::uint64_t>(length, buffer.size()), from);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) fail_staging(n < 0 ? errno : EIO);
        write_all_at(out, buffer.data(), static_cast<std::uint64_t>(n), static_cast<std::uint64_t>(to));
        from += n;
        to += n;
        length -= static_cast<std::uint64_t>(n);
    }
}

// A staging of the committed blob's bytes (nothing for a missing blob, or when `empty`).
std::shared_ptr<Staging> stage_blob(State& s, const std::string& path, bool empty) {
    auto staging = std::make_shared<Staging>();
    storage::OpenBlob blob;
    if (!empty) {
        try {
            blob = s.blobs->open(path);
        } catch (const storage::StorageError& e) {
            if (e.status() != 404) throw;
            empty = true;
        }
    }
    staging->in_memory = empty || blob.info.size <= kMemoryStagingBytes;
    staging->fd = staging_fd(s, staging->in_memory);
    staging->whole = empty;
    staging->committed_size = empty ? 0 : blob.info.size;
    if (empty) return staging;
    const int fd = staging->fd;
    if (blob.in_memory()) {
        write_all_at(fd, blob.bytes.data(), blob.bytes.size(), 0);
        return staging;
    }
    // Runs of files are copied; bytes in memory written; zeros (a page blob's unwritten pages)
    // left as holes of the sparse staging file.
    for (const storage::BlobPart& part : blob.parts) {
        if (part.fd >= 0) {
            copy_range(part.fd, part.file_offset, fd, part.start, part.size);
        } else if (part.bytes) {
            write_all_at(fd, part.bytes->data() + part.file_offset, part.size, part.start);
        }
    }
    // An append blob's tail follows its parts.
    if (!blob.bytes.empty()) write_all_at(fd, blob.bytes.data(), blob.bytes.size(), blob.info.size - blob.bytes.size());
    if (::ftruncate(fd, static_cast<off_t>(blob.info.size)) != 0) fail_staging(errno);
    return staging;
}

}  // namespace

void Staging::wrote(std::uint64_t start, std::uint64_t end) {
    if (end <= start) return;
    // Merged with the runs it touches or meets.
    auto it = written.upper_bound(start);
    if (it != written.begin() && std::prev(it)->second >= start) --it;
    while (it != written.end() && it->first <= end) {
        start = std::min(start, it->first);
        end = std::max(end, it->second);
        it = written.erase(it);
    }
    written.emplace(start, end);
}

Staging::~Staging() {
    if (fd >= 0) ::close(fd);
    for (int old : retired) ::close(old);
}

void make_room(State& s, Staging& staging, std::uint64_t end) {
    if (!staging.in_memory || end <= kMemoryStagingBytes) return;
    struct stat st {};
    if (::fstat(staging.fd, &st) != 0) fail_staging(errno);
    const int file = staging_fd(s, false);
    try {
        copy_range(staging.fd, 0, file, 0, static_cast<std::uint64_t>(st.st_size));
        if (::ftruncate(file, st.st_size) != 0) fail_staging(errno);
    } catch (...) {
        ::close(file);
        throw;
    }
    staging.retired.push_back(staging.fd.exchange(file));
    staging.in_memory = false;
}

void commit_locked(State& s, Node& node, Staging& staging) {
    if (!staging.dirty) return;
    std::string path;
    {
        std::lock_guard guard(s.mutex);
        if (node.removed) {  // unlinked while open: its bytes go with it
            staging.dirty = false;
            return;
        }
        path = node.path;
    }
    struct stat st {};
    if (::fstat(staging.fd, &st) != 0) throw std::system_error(errno, std::generic_category(), "cannot read the staged file");
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (!staging.whole) {
        // Only what this mount wrote (within the file's size now), where the service takes that.
        std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
        for (const auto& [start, end] : staging.written) {
            if (start < size) ranges.emplace_back(start, std::min(end, size));
        }
        try {
            if (s.blobs->update(path, staging.fd, size, size != staging.committed_size, ranges)) {
                staging.written.clear();
                staging.committed_size = size;
                staging.dirty = false;
                return;
            }
        } catch (const storage::StorageError& e) {
            if (e.status() != 404) throw;  // deleted meanwhile: put whole again, below
        }
    }
    storage::ContentSettings settings;
    settings.content_type = "application/octet-stream";
    storage::Metadata metadata;
    if (std::optional<storage::BlobInfo> old = find_blob(s, path)) {
        settings = old->content;
        settings.content_md5.clear();
        metadata = old->metadata;
    }
    s.blobs->put(path, staging.fd, size, settings, metadata);
    staging.written.clear();
    staging.committed_size = size;
    staging.whole = false;
    staging.dirty = false;
}

void commit(State& s, Node& node, Staging& staging) {
    std::lock_guard guard(staging.mutex);
    commit_locked(s, node, staging);
}

Entry put_empty(State& s, const std::string& path, const storage::Metadata& metadata) {
    storage::ContentSettings settings;
    settings.content_type = "application/octet-stream";
    return entry_of_blob(s.blobs->put(path, -1, 0, settings, metadata));
}

std::shared_ptr<Staging> staging_of(State& s, Node& node, bool truncate) {
    std::shared_ptr<Staging> staging;
    {
        std::lock_guard guard(s.mutex);
        staging = node.staging;
    }
    if (!staging) {
        auto made = stage_blob(s, path_of(s, node), truncate);
        std::lock_guard guard(s.mutex);
        if (!node.staging) node.staging = made;
        staging = node.staging;
    }
    if (truncate) {
        std::lock_guard guard(staging->mutex);
        if (::ftruncate(staging->fd, 0) != 0) throw std::system_error(errno, std::generic_category(), "truncate");
        staging->dirty = true;
        staging->whole = true;
    }
    return staging;
}

}  // namespace bai::mounts::blob_fs
