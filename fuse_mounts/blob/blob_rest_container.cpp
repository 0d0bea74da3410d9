#include "fuse_mounts/blob/blob_rest_container.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <system_error>

#include "common/crypto/base64.h"
#include "common/text/percent_encoding.h"
#include "common/time/timestamps.h"
#include "fake_storage/auth/shared_key_signer.h"
#include "fake_storage/blob/blob_service.h"
#include "fake_storage/engine/storage_error.h"
#include "fuse_mounts/blob/blob_rest_answers.h"

namespace bai::mounts {

namespace {

using storage::StorageError;

constexpr const char* kVersion = "2020-04-08";
constexpr std::uint64_t kBlockSize = 8ull << 20;  // what a commit holds in memory at once
constexpr int kFeedWaitSeconds = 20;

void write_all(int fd, const char* data, size_t size) {
    while (size > 0) {
        const ssize_t n = ::write(fd, data, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw std::system_error(errno ? errno : EIO, std::generic_category(), "cannot keep the downloaded blob");
        data += n;
        size -= static_cast<size_t>(n);
    }
}

// Up to `size` bytes of `fd` at `offset`.
std::string read_at(int fd, std::uint64_t offset, std::uint64_t size) {
    std::string bytes(size, '\0');
    std::uint64_t done = 0;
    while (done < size) {
        const ssize_t n = ::pread(fd, bytes.data() + done, size - done, static_cast<off_t>(offset + done));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw std::system_error(errno, std::generic_category(), "cannot read the staged file");
        if (n == 0) break;
        done += static_cast<std::uint64_t>(n);
    }
    bytes.resize(done);
    return bytes;
}

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

BlobRestContainer::BlobRestContainer(BlobRestSettings settings) : settings_(std::move(settings)) {
    const std::string& url = settings_.endpoint;
    const bool https = url.rfind("https://", 0) == 0;
    if (!https && url.rfind("http://", 0) != 0) throw std::invalid_argument("blobEndpoint: not an http(s):// URL: '" + url + "'");
    const size_t slash = url.find('/', url.find("//") + 2);
    origin_ = url.substr(0, slash);
    base_path_ = slash == std::string::npos ? "" : url.substr(slash);
    while (!base_path_.empty() && base_path_.back() == '/') base_path_.pop_back();
    if (settings_.account.empty()) throw std::invalid_argument("accountName: missing");
    if (settings_.container.empty()) throw std::invalid_argument("containerName: missing");
    if (settings_.key.empty() == settings_.sas.empty()) throw std::invalid_argument("accountKey or sasToken: give one");
    if (!settings_.key.empty() && !crypto::base64_decode(settings_.key)) throw std::invalid_argument("accountKey: not base64");
    if (!settings_.sas.empty() && settings_.sas.front() == '?') settings_.sas.erase(0, 1);
    if (!client()->is_valid()) throw std::invalid_argument("blobEndpoint: cannot use '" + url + "'");
    if (settings_.follow_changes) follower_ = std::thread([this] { follow(); });
}

BlobRestContainer::~BlobRestContainer() {
    {
        std::lock_guard guard(stop_mutex_);
        stopping_ = true;
        if (feed_) feed_->stop();  // the long poll in flight
    }
    stop_cv_.notify_all();
    if (follower_.joinable()) follower_.join();
}

std::unique_ptr<httplib::Client> BlobRestContainer::client() const {
    auto c = std::make_unique<httplib::Client>(origin_);
    c->set_url_encode(false);  // targets are encoded here
    c->set_keep_alive(true);
    // The head and the body go in separate writes: without this, Nagle's algorithm holds the
    // body until the server's delayed ACK (40 ms): 22 small files a second were written so.
    c->set_tcp_nodelay(true);
    c->set_connection_timeout(std::chrono::seconds(10));
    c->set_read_timeout(std::chrono::seconds(kFeedWaitSeconds + 30));
    c->set_write_timeout(std::chrono::seconds(60));
    if (!settings_.ca_file.empty()) c->set_ca_cert_path(settings_.ca_file.c_str());
    return c;
}

std::string BlobRestContainer::target(const std::string& name, const std::string& query) const {
    std::string t = base_path_ + "/" + text::percent_encode(settings_.container);
    if (!name.empty()) t += "/" + text::percent_encode(name, true);
    std::string q = query;
    if (!settings_.sas.empty()) q += (q.empty() ? "" : "&") + settings_.sas;
    return q.empty() ? t : t + "?" + q;
}

void BlobRestContainer::sign(httplib::Request& request, long long content_length) const {
    request.target = request.path;
    if (!settings_.key.empty()) {
        storage::sign_shared_key(request, settings_.account, settings_.key, content_length);
    } else {  // the SAS is in the target
        request.set_header("x-ms-date", time::format_rfc1123(time::now()));
        request.set_header("x-ms-version", kVersion);
    }
    request.path = request.target;
}

httplib::Result BlobRestContainer::send(httplib::Request request, long long content_length) {
    sign(request, content_length);
    for (int attempt = 0;; ++attempt) {
        std::unique_ptr<httplib::Client> c;
        {
            std::lock_guard guard(pool_mutex_);
            if (!idle_.empty() && attempt == 0) {
                c = std::move(idle_.back());
                idle_.pop_back();
            }
        }
        if (!c) c = client();
        httplib::Result result = c->send(request);
        if (!result) {
            // A kept-alive connection the server closed meanwhile: once more on a new one.
            if (attempt == 0 && result.error() != httplib::Error::Canceled) continue;
            throw StorageError(503, "ServerUnreachable",
                               "cannot reach the blob service at " + origin_ + ": " + httplib::to_string(result.error()));
        }
        {
            std::lock_guard guard(pool_mutex_);
            if (idle_.size() < 16) idle_.push_back(std::move(c));
        }
        if (result->status >= 300) {
            throw StorageError(result->status, result->get_header_value("x-ms-error-code"), error_message(*result));
        }
        return result;
    }
}

time::TimePoint BlobRestContainer::modified() {
    if (!settings_.sas.empty()) {
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
    req.path = target("", "restype=container");
    return time_of(*send(req), "Last-Modified");
}

storage::BlobInfo BlobRestContainer::properties(const std::string& name) {
    httplib::Request req;
    req.method = "HEAD";
    req.path = target(name, "");
    return info_of(settings_.container, name, *send(req));
}

storage::BlobListPage BlobRestContainer::list(const storage::ListOptions& options) {
    std::string query = "restype=container&comp=list&include=metadata&maxresults=" + std::to_string(options.max_results);
    if (!options.prefix.empty()) query += "&prefix=" + text::percent_encode(options.prefix);
    if (!options.delimiter.empty()) query += "&delimiter=" + text::percent_encode(options.delimiter);
    if (!options.marker.empty()) query += "&marker=" + text::percent_encode(options.marker);
    httplib::Request req;
    req.method = "GET";
    req.path = target("", query);
    httplib::Result result = send(req);
    return parse_list_blobs(result->body, settings_.container);
}

storage::OpenBlob BlobRestContainer::open(const std::string& name) {
    // The whole blob is downloaded into an unnamed file, as blobfuse's file cache does: readers
    // then see the blob as it was when opened.
    int fd = ::open(settings_.staging_dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) throw std::system_error(errno, std::generic_category(), "cannot stage in " + settings_.staging_dir.string());
    storage::BlobPart part(fd, 0, 0);  // owns fd from here
    httplib::Request req;
    req.method = "GET";
    req.path = target(name, "");
    std::string error_body;
    int status = 0;
    req.response_handler = [&](const httplib::Response& r) {
        status = r.status;
        return true;
    };
    req.content_receiver = [&](const char* data, size_t size, std::uint64_t, std::uint64_t) {
        if (status >= 300) {
            if (error_body.size() < 65536) error_body.append(data, size);
        } else {
            write_all(fd, data, size);
        }
        return true;
    };
    httplib::Result result = [&] {
        try {
            return send(req);
        } catch (const StorageError& e) {
            if (e.status() == 503) throw;
            httplib::Response r;
            r.status = e.status();
            r.body = error_body;
            throw StorageError(e.status(), e.code(), error_message(r));
        }
    }();
    storage::OpenBlob blob;
    blob.info = info_of(settings_.container, name, *result);
    part.size = blob.info.size;
    if (::lseek(fd, 0, SEEK_END) != static_cast<off_t>(blob.info.size)) {
        throw StorageError(502, "IncompleteBody", "Get Blob of " + name + " ended before its Content-Length");
    }
    blob.parts.push_back(std::move(part));
    return blob;
}

storage::BlobInfo BlobRestContainer::put(const std::string& name, int fd, std::uint64_t size,
                                         const storage::ContentSettings& settings, const storage::Metadata& metadata) {
    if (fd < 0) size = 0;
    httplib::Request req;
    req.method = "PUT";
    httplib::Headers answer;
    if (size <= kBlockSize) {
        req.path = target(name, "");
        req.body = size ? read_at(fd, 0, size) : std::string();
        if (req.body.size() != size) throw std::runtime_error("the staged file of " + name + " shrank while committed");
        req.set_header("x-ms-blob-type", "BlockBlob");
        set_content_headers(req, settings, metadata);
        answer = send(req, static_cast<long long>(size))->headers;
    } else {
        // Put Block of each piece, then Put Block List: the blob is replaced at the last call.
        std::string list = "<?xml version=\"1.0\" encoding=\"utf-8\"?><BlockList>";
        for (std::uint64_t at = 0, n = 0; at < size; at += kBlockSize, ++n) {
            char id[32];
            std::snprintf(id, sizeof id, "%020llu", static_cast<unsigned long long>(n));
            const std::string block_id = crypto::base64_encode(std::string(id));
            httplib::Request block;
            block.method = "PUT";
            block.path = target(name, "comp=block&blockid=" + text::percent_encode(block_id));
            block.body = read_at(fd, at, std::min(kBlockSize, size - at));
            if (block.body.empty()) throw std::runtime_error("the staged file of " + name + " shrank while committed");
            send(block, static_cast<long long>(block.body.size()));
            list += "<Latest>" + block_id + "</Latest>";
        }
        list += "</BlockList>";
        req.path = target(name, "comp=blocklist");
        req.body = list;
        req.set_header("Content-Type", "application/xml");
        set_content_headers(req, settings, metadata);
        answer = send(req)->headers;
    }
    auto header = [&answer](const char* name) {
        auto it = answer.find(name);
        return it == answer.end() ? std::string() : it->second;
    };
    storage::BlobInfo b;
    b.container = settings_.container;
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
    req.path = target(name, "");
    req.set_header("x-ms-delete-snapshots", "include");
    send(req, 0);
}

void BlobRestContainer::copy(const std::string& from, const std::string& to) {
    httplib::Request req;
    req.method = "PUT";
    req.path = target(to, "");
    req.set_header("x-ms-copy-source", origin_ + target(from, ""));
    httplib::Result result = send(req, 0);
    // A copy within the account completes at once in the emulator; wait for one that does not.
    for (std::string status = result->get_header_value("x-ms-copy-status"); status == "pending";) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        httplib::Request head;
        head.method = "HEAD";
        head.path = target(to, "");
        status = send(head)->get_header_value("x-ms-copy-status");
        if (status == "failed" || status == "aborted") {
            throw StorageError(500, "CopyFailed", "the copy of " + from + " to " + to + " " + status);
        }
    }
}

void BlobRestContainer::follow() {
    std::optional<std::uint64_t> since;
    std::string epoch;
    bool unreachable = false;
    for (;;) {
        {
            std::lock_guard guard(stop_mutex_);
            if (stopping_) return;
            feed_ = client();
        }
        std::string query = std::string("restype=container&comp=") + storage::kChangesComp;
        if (since) query += "&since=" + std::to_string(*since) + "&epoch=" + text::percent_encode(epoch) +
                            "&timeout=" + std::to_string(kFeedWaitSeconds);
        httplib::Request req;
        req.method = "GET";
        req.path = target("", query);
        sign(req, -1);
        httplib::Result result = feed_->send(req);
        std::vector<std::string> paths;
        bool everything = false;
        if (result && result->status == 200) {
            const nlohmann::json body = nlohmann::json::parse(result->body, nullptr, false);
            if (body.is_object() && body.value("next", nlohmann::json()).is_number_unsigned()) {
                const std::string now_epoch = body.value("epoch", "");
                // A first answer after a time unreachable, or from another run of the emulator:
                // whatever changed meanwhile is unknown.
                everything = body.value("everything", false) || unreachable || (since && now_epoch != epoch);
                if (!everything && body.contains("paths") && body["paths"].is_array()) {
                    for (const auto& p : body["paths"]) {
                        if (p.is_string()) paths.push_back(p.get<std::string>());
                    }
                }
                since = body["next"].get<std::uint64_t>();
                epoch = now_epoch;
                unreachable = false;
            }
        } else {
            unreachable = true;  // the container gone (404) counts too: everything changed
            if (result && result->status == 404) everything = true;
        }
        if (everything) changes_.publish(settings_.account, settings_.container, "");
        for (const std::string& path : paths) changes_.publish(settings_.account, settings_.container, path);
        if (!result || result->status != 200) {
            std::unique_lock lock(stop_mutex_);
            stop_cv_.wait_for(lock, std::chrono::seconds(1), [this] { return stopping_; });
        }
    }
}

}  // namespace bai::mounts
