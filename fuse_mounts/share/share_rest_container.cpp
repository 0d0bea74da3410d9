#include "fuse_mounts/share/share_rest_container.h"

#include <unistd.h>

#include <cerrno>

#include "common/text/percent_encoding.h"
#include "fake_storage/engine/storage_error.h"
#include "fuse_mounts/blob/blob_rest_answers.h"
#include "fuse_mounts/share/share_rest_answers.h"

namespace bai::mounts {

namespace {

using storage::StorageError;

constexpr const char* kFolderMarker = "hdi_isfolder";
constexpr std::uint64_t kRangeSize = 4ull << 20;  // Put Range's largest

bool is_marker(const storage::Metadata& metadata) {
    auto it = metadata.find(kFolderMarker);
    return it != metadata.end() && (it->second == "true" || it->second == "True" || it->second == "TRUE");
}

// The runs of `fd` below `size` that hold data (a sparse staging file's holes are left unwritten:
// a created file reads zeros there).
std::vector<std::pair<std::uint64_t, std::uint64_t>> data_runs(int fd, std::uint64_t size) {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> runs;
    off_t at = 0;
    while (static_cast<std::uint64_t>(at) < size) {
        const off_t data = ::lseek(fd, at, SEEK_DATA);
        if (data < 0) {
            if (errno == ENXIO) break;                   // nothing but a hole up to the end
            return {{0, size}};                          // no SEEK_DATA here: all of it
        }
        off_t hole = ::lseek(fd, data, SEEK_HOLE);
        if (hole < 0) hole = static_cast<off_t>(size);
        const auto end = std::min<std::uint64_t>(static_cast<std::uint64_t>(hole), size);
        if (static_cast<std::uint64_t>(data) >= end) break;
        runs.emplace_back(static_cast<std::uint64_t>(data), end);
        at = hole;
    }
    return runs;
}

void set_file_content_headers(httplib::Request& req, const storage::ContentSettings& s) {
    auto set = [&](const char* name, const std::string& value) {
        if (!value.empty()) req.set_header(name, value);
    };
    set("x-ms-content-type", s.content_type);
    set("x-ms-content-encoding", s.content_encoding);
    set("x-ms-content-language", s.content_language);
    set("x-ms-content-disposition", s.content_disposition);
    set("x-ms-cache-control", s.cache_control);
}

}  // namespace

ShareRestContainer::ShareRestContainer(StorageRestSettings settings)
    : session_(std::move(settings), {"fileEndpoint", "shareName", "file"}) {
    if (session_.settings().follow_changes) session_.follow("share", changes_);
}

time::TimePoint ShareRestContainer::modified() {
    if (!session_.settings().sas.empty()) {
        // A share's SAS does not reach Get Share Properties (the service's rule): a listing says
        // that the share is there.
        httplib::Request req;
        req.method = "GET";
        req.path = session_.target("", "restype=directory&comp=list&maxresults=1");
        session_.send(req);
        return started_;
    }
    httplib::Request req;
    req.method = "HEAD";
    req.path = session_.target("", "restype=share");
    return time_of(*session_.send(req), "Last-Modified");
}

storage::BlobInfo ShareRestContainer::properties(const std::string& name) {
    httplib::Request req;
    req.method = "HEAD";
    req.path = session_.target(name, "");
    try {
        return share_file_info(container(), name, *session_.send(req));
    } catch (const StorageError& e) {
        if (e.status() != 404) throw;
    }
    req.path = session_.target(name, "restype=directory");
    storage::BlobInfo directory = share_file_info(container(), name, *session_.send(req));
    directory.size = 0;
    directory.metadata[kFolderMarker] = "true";
    return directory;
}

storage::BlobListPage ShareRestContainer::list(const storage::ListOptions& options) {
    if (!options.prefix.empty() && options.prefix.back() != '/') {
        throw std::invalid_argument("a share is listed one directory at a time: '" + options.prefix + "'");
    }
    const std::string directory = options.prefix.empty() ? "" : options.prefix.substr(0, options.prefix.size() - 1);
    std::string query = "restype=directory&comp=list&maxresults=" + std::to_string(options.max_results);
    if (!options.marker.empty()) query += "&marker=" + text::percent_encode(options.marker);
    httplib::Request req;
    req.method = "GET";
    req.path = session_.target(directory, query);
    try {
        return parse_list_directory(session_.send(req)->body, container(), options.prefix);
    } catch (const StorageError& e) {
        if (e.status() != 404 || e.code() == "ShareNotFound") throw;
        return {};  // no such directory: nothing below that name
    }
}

storage::OpenBlob ShareRestContainer::open(const std::string& name) {
    return session_.download_whole(name, "Get File",
                                   [&](const httplib::Response& r) { return share_file_info(container(), name, r); });
}

storage::BlobInfo ShareRestContainer::put(const std::string& name, int fd, std::uint64_t size,
                                          const storage::ContentSettings& settings, const storage::Metadata& metadata) {
    httplib::Request req;
    req.method = "PUT";
    if (is_marker(metadata)) {
        req.path = session_.target(name, "restype=directory");
        for (const auto& [key, value] : metadata) {
            if (key != kFolderMarker) req.set_header("x-ms-meta-" + key, value);
        }
        storage::BlobInfo directory = share_file_info(container(), name, *session_.send(req, 0));
        directory.size = 0;
        directory.metadata = metadata;
        return directory;
    }
    if (fd < 0) size = 0;
    req.path = session_.target(name, "");
    req.set_header("x-ms-type", "file");
    req.set_header("x-ms-content-length", std::to_string(size));
    set_file_content_headers(req, settings);
    for (const auto& [key, value] : metadata) req.set_header("x-ms-meta-" + key, value);
    storage::BlobInfo file = share_file_info(container(), name, *session_.send(req, 0));
    if (size > 0) put_ranges(name, fd, data_runs(fd, size), file);
    file.size = size;
    file.content = settings;
    file.metadata = metadata;
    return file;
}

void ShareRestContainer::put_ranges(const std::string& name, int fd,
                                    const std::vector<std::pair<std::uint64_t, std::uint64_t>>& runs, storage::BlobInfo& file) {
    for (const auto& [start, end] : runs) {
        for (std::uint64_t at = start; at < end; at += kRangeSize) {
            const std::uint64_t length = std::min(kRangeSize, end - at);
            httplib::Request range;
            range.method = "PUT";
            range.path = session_.target(name, "comp=range");
            range.set_header("x-ms-write", "update");
            range.set_header("x-ms-range", "bytes=" + std::to_string(at) + "-" + std::to_string(at + length - 1));
            range.body = read_staged(fd, at, length);
            httplib::Result answer = session_.send(range, static_cast<long long>(length));
            file.etag = answer->get_header_value("ETag");
            file.last_modified = time_of(*answer, "Last-Modified");
        }
    }
}

bool ShareRestContainer::update(const std::string& name, int fd, std::uint64_t size, bool resize,
                                const std::vector<std::pair<std::uint64_t, std::uint64_t>>& ranges) {
    storage::BlobInfo file;
    if (resize) {
        httplib::Request req;
        req.method = "PUT";
        req.path = session_.target(name, "comp=properties");
        req.set_header("x-ms-content-length", std::to_string(size));
        session_.send(req, 0);
    }
    put_ranges(name, fd, ranges, file);
    return true;
}

void ShareRestContainer::remove(const std::string& name) {
    httplib::Request req;
    req.method = "DELETE";
    req.path = session_.target(name, "");
    try {
        session_.send(req, 0);
        return;
    } catch (const StorageError& e) {
        if (e.status() != 404) throw;
    }
    req.path = session_.target(name, "restype=directory");
    session_.send(req, 0);
}

void ShareRestContainer::copy(const std::string& from, const std::string& to) {
    // Not asked by the filesystem (rename() serves its renames): a download and an upload.
    storage::OpenBlob file = open(from);
    put(to, file.single_fd(), file.info.size, file.info.content, file.info.metadata);
}

bool ShareRestContainer::rename(const std::string& from, const std::string& to, bool directory) {
    httplib::Request req;
    req.method = "PUT";
    req.path = session_.target(to, directory ? "restype=directory&comp=rename" : "comp=rename");
    req.set_header("x-ms-file-rename-source", session_.origin() + session_.target(from, ""));
    req.set_header("x-ms-file-rename-replace-if-exists", "true");
    session_.send(req, 0);
    return true;
}

}  // namespace bai::mounts
