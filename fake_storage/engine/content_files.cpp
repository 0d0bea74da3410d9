#include "fake_storage/engine/content_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "common/crypto/random_id.h"

namespace bai::storage {
namespace fs = std::filesystem;
namespace {

[[noreturn]] void io_error(const std::string& what, const fs::path& path) {
    throw std::runtime_error(what + " " + path.string() + ": " + std::strerror(errno));
}

const char* kind_dir(ContentKind kind) { return kind == ContentKind::blob ? "blobs" : "blocks"; }

void write_all(int fd, const char* data, size_t size, const fs::path& path) {
    while (size > 0) {
        ssize_t n = ::write(fd, data, size);
        if (n < 0) {
            if (errno == EINTR) continue;
            io_error("cannot write", path);
        }
        data += n;
        size -= static_cast<size_t>(n);
    }
}

}  // namespace

ContentWriter::ContentWriter(fs::path spill_dir, bool with_md5, bool with_crc64) : spill_dir_(std::move(spill_dir)) {
    if (with_md5) md5_ = std::make_unique<crypto::Md5>();
    if (with_crc64) crc64_ = std::make_unique<crypto::Crc64>();
}

namespace {
constexpr size_t kWriteChunk = 1 << 20;
}  // namespace

void ContentWriter::flush_pending() {
    if (fd_ < 0 || pending_.empty()) return;
    write_all(fd_, pending_.data(), pending_.size(), path_);
    pending_.clear();
}

ContentWriter::~ContentWriter() {
    if (fd_ >= 0) ::close(fd_);
    if (!path_.empty() && !committed_) ::unlink(path_.c_str());
}

void ContentWriter::spill() {
    path_ = spill_dir_ / crypto::random_hex(16);
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd_ < 0) io_error("cannot create", path_);
    write_all(fd_, buffer_.data(), buffer_.size(), path_);
    buffer_.clear();
    buffer_.shrink_to_fit();
}

void ContentWriter::append(std::string_view bytes) {
    if (md5_) md5_->update(bytes);
    if (crc64_) crc64_->update(bytes);
    if (fd_ < 0 && size_ + bytes.size() > kInlineLimit) spill();
    if (fd_ < 0) {
        buffer_.append(bytes);
    } else if (pending_.size() + bytes.size() < kWriteChunk) {
        if (pending_.capacity() < kWriteChunk) pending_.reserve(kWriteChunk);
        pending_.append(bytes);
    } else {
        flush_pending();
        write_all(fd_, bytes.data(), bytes.size(), path_);
    }
    size_ += bytes.size();
}

void ContentWriter::append_from(int fd, std::uint64_t offset, std::uint64_t length) {
    auto in_offset = static_cast<off64_t>(offset);
    std::uint64_t left = length;
    if (fd_ < 0 && size_ + length > kInlineLimit) spill();
    flush_pending();
    // In-kernel copy unless the bytes must pass through the digest or stay in memory.
    while (left > 0 && !md5_ && !crc64_ && fd_ >= 0) {
        ssize_t n = ::copy_file_range(fd, &in_offset, fd_, nullptr, left, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;  // not supported here, or a short source: read below
        left -= static_cast<std::uint64_t>(n);
        size_ += static_cast<std::uint64_t>(n);
    }
    std::vector<char> buffer(std::min<std::uint64_t>(left, 1 << 20));
    while (left > 0) {
        size_t want = static_cast<size_t>(std::min<std::uint64_t>(left, buffer.size()));
        ssize_t n = ::pread(fd, buffer.data(), want, in_offset);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) io_error("cannot read for", path_);
        if (n == 0) throw std::runtime_error("content shorter than recorded, writing " + path_.string());
        append(std::string_view(buffer.data(), static_cast<size_t>(n)));
        in_offset += n;
        left -= static_cast<std::uint64_t>(n);
    }
}

std::string ContentWriter::md5() {
    if (md5_) {
        md5_digest_ = md5_->finish();
        md5_.reset();
    }
    return md5_digest_;
}

ContentFiles::ContentFiles(fs::path root, bool durable)
    : root_(std::move(root)), tmp_(root_ / "tmp"), durable_(durable) {
    fs::create_directories(tmp_);
}

std::unique_ptr<ContentWriter> ContentFiles::begin(bool with_md5, bool with_crc64) {
    return std::unique_ptr<ContentWriter>(new ContentWriter(tmp_, with_md5, with_crc64));
}

fs::path ContentFiles::path(const std::string& account, ContentKind kind, const std::string& id) const {
    return root_ / account / kind_dir(kind) / id.substr(0, 2) / id;
}

void ContentFiles::ensure_parent(const fs::path& path) {
    fs::path dir = path.parent_path();
    std::lock_guard lock(dirs_mutex_);
    if (known_dirs_.contains(dir)) return;
    fs::create_directories(dir);
    known_dirs_.insert(dir);
}

std::string ContentFiles::commit(ContentWriter& writer, const std::string& account, ContentKind kind) {
    if (writer.in_memory()) writer.spill();
    writer.flush_pending();
    if (durable_ && ::fsync(writer.fd_) != 0) io_error("cannot fsync", writer.path_);
    ::close(writer.fd_);
    writer.fd_ = -1;
    std::string id = crypto::random_hex(16);
    fs::path target = path(account, kind, id);
    ensure_parent(target);
    if (::rename(writer.path_.c_str(), target.c_str()) != 0) io_error("cannot move into place", target);
    writer.committed_ = true;
    return id;
}

std::string ContentFiles::link(const std::string& account, ContentKind kind, const std::string& id) {
    std::string new_id = crypto::random_hex(16);
    fs::path target = path(account, kind, new_id);
    ensure_parent(target);
    fs::path source = path(account, kind, id);
    if (::link(source.c_str(), target.c_str()) != 0) io_error("cannot link", source);
    return new_id;
}

int ContentFiles::open(const std::string& account, ContentKind kind, const std::string& id) const {
    return ::open(path(account, kind, id).c_str(), O_RDONLY | O_CLOEXEC);
}

void ContentFiles::remove(const std::string& account, ContentKind kind, const std::string& id) const {
    ::unlink(path(account, kind, id).c_str());
}

size_t ContentFiles::sweep(const std::set<std::string>& live) const {
    size_t removed = 0;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(tmp_, ec)) {
        removed += fs::remove(entry.path(), ec) ? 1 : 0;
    }
    for (const auto& account : fs::directory_iterator(root_, ec)) {
        if (account.path() == tmp_ || !account.is_directory()) continue;
        for (const char* kind : {"blobs", "blocks"}) {
            fs::path dir = account.path() / kind;
            if (!fs::exists(dir)) continue;
            for (const auto& file : fs::recursive_directory_iterator(dir, ec)) {
                if (!file.is_regular_file()) continue;
                if (!live.contains(file.path().filename().string())) {
                    removed += fs::remove(file.path(), ec) ? 1 : 0;
                }
            }
        }
    }
    return removed;
}

}  // namespace bai::storage
