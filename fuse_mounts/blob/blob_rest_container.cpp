#include "fuse_mounts/blob/blob_rest_container.h"

#include <chrono>
#include <thread>

#include "common/crypto/base64.h"
#include "common/text/percent_encoding.h"
#include "common/time/timestamps.h"
#include "fake_storage/engine/storage_error.h"
#include "fuse_mounts/blob/blob_rest_answers.h"

namespace bai::mounts {

namespace {

using storage::StorageError;

constexpr std::uint64_t kBlockSize = 8ull << 20;  // what a commit holds in memory at once

void set_content_headers(httplib::Request& req, const storage::ContentSettings& s, const storage::Metadata& metadata) {
    auto set = [&](const char* name, const std::string& value) {
        if (!value.empty()) req.set_header(name, value);
    };
    set("x-ms-blob-content-type", s.content_type);
    set("x-ms-blob-content-encoding", s.content_encoding);
    set("x-ms-blob-content-language", s.content_language);
    set("x-ms-blob-content-disposition", s.content_disposition);
    set("x-ms-blob-cache-control", s.cache_control);
    for (const auto& [key, value] : metadata) req.set_header("x-ms-meta-" + key, value);
}

}  // namespace

BlobRestContainer::BlobRestContainer(BlobRestSettings settings)
    : session_(std::move(settings), {"blobEndpoint", "containerName", "blob"}) {
    if (session_.settings().follow_changes) session_.follow("container", changes_);
}

time::TimePoint BlobRestContainer::modified() {
    if (!settings().sas.empty()) {
        // A container's SAS does not reach Get Container Properties (the service's rule): a
        // listing says that the container is there, and its virtual directories show the time
        // of the mount.
        storage::ListOptions one;
        one.max_results = 1;
        list(one);
        return started_;
    }
    httplib::Request req;
    req.method = "HEAD";
    req.path = session_.target("", "restype=container");
    return time_of(*session_.send(req), "Last-Modified");
}

storage::BlobInfo BlobRestContainer::properties(const std::string& name) {
    httplib::Request req;
    req.method = "HEAD";
    req.path = session_.target(name, "");
    return info_of(settings().container, name, *session_.send(req));
}

storage::BlobListPage BlobRestContainer::list(const storage::ListOptions& options) {
    std::string query = "restype=container&comp=list&include=metadata&maxresults=" + std::to_string(options.max_results);
    if (!options.prefix.empty()) query += "&prefix=" + text::percent_encode(options.prefix);
    if (!options.delimiter.empty()) query += "&delimiter=" + text::percent_encode(options.delimiter);
    if (!options.marker.empty()) query += "&marker=" + text::percent_encode(options.marker);
    httplib::Request req;
    req.method = "GET";
    req.path = session_.target("", query);
    httplib::Result result = session_.send(req);
    return parse_list_blobs(result->body, settings().container);
}

storage::OpenBlob BlobRestContainer::open(const std::string& name) {
    return session_.download_whole(name, "Get Blob", [&](const httplib::Response& r) { return info_of(container(), name, r); });
}

storage::BlobInfo BlobRestContainer::put(const std::string& name, int fd, std::uint64_t size,
                                         const storage::ContentSettings& settings, const storage::Metadata& metadata) {
    if (fd < 0) size = 0;
    httplib::Request req;
    req.method = "PUT";
    httplib::Headers answer;
    if (size <= kBlockSize) {
        req.path = session_.target(name, "");
        req.body = size ? read_staged(fd, 0, size) : std::string();
        req.set_header("x-ms-blob-type", "BlockBlob");
        set_content_headers(req, settings, metadata);
        answer = session_.send(req, static_cast<long long>(size))->headers;
    } else {
        // Put Block of each piece, then Put Block List: the blob is replaced at the last call.
        std::string list = "<?xml version=\"1.0\" encoding=\"utf-8\"?><BlockList>";
        for (std::uint64_t at = 0, n = 0; at < size; at += kBlockSize, ++n) {
            char id[32];
            std::snprintf(id, sizeof id, "%020llu", static_cast<unsigned long long>(n));
            const std::string block_id = crypto::base64_encode(std::string(id));
            httplib::Request block;
            block.method = "PUT";
            block.path = session_.target(name, "comp=block&blockid=" + text::percent_encode(block_id));
            block.body = read_staged(fd, at, std::min(kBlockSize, size - at));
            session_.send(block, static_cast<long long>(block.body.size()));
            list += "<Latest>" + block_id + "</Latest>";
        }
        list += "</BlockList>";
        req.path = session_.target(name, "comp=blocklist");
        req.body = list;
        req.set_header("Content-Type", "application/xml");
        set_content_headers(req, settings, metadata);
        answer = session_.send(req)->headers;
    }
    auto header = [&answer](const char* name) {
        auto it = answer.find(name);
        return it == answer.end() ? std::string() : it->second;
    };
    storage::BlobInfo b;
    b.container = session_.settings().container;
    b.name = name;
    b.size = size;
    b.etag = header("ETag");
    b.last_modified = time::parse_rfc1123(header("Last-Modified")).value_or(time::TimePoint{});
    b.created = b.last_modified;
    b.content = settings;
    b.metadata = metadata;
    return b;
}

void BlobRestContainer::remove(const std::string& name) {
    httplib::Request req;
    req.method = "DELETE";
    req.path = session_.target(name, "");
    req.set_header("x-ms-delete-snapshots", "include");
    session_.send(req, 0);
}

void BlobRestContainer::copy(const std::string& from, const std::string& to) {
    httplib::Request req;
    req.method = "PUT";
    req.path = session_.target(to, "");
    req.set_header("x-ms-copy-source", session_.origin() + session_.target(from, ""));
    httplib::Result result = session_.send(req, 0);
    // A copy within the account completes at once in the emulator; wait for one that does not.
    for (std::string status = result->get_header_value("x-ms-copy-status"); status == "pending";) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        httplib::Request head;
        head.method = "HEAD";
        head.path = session_.target(to, "");
        status = session_.send(head)->get_header_value("x-ms-copy-status");
        if (status == "failed" || status == "aborted") {
            throw StorageError(500, "CopyFailed", "the copy of " + from + " to " + to + " " + status);
        }
    }
}

}  // namespace bai::mounts
