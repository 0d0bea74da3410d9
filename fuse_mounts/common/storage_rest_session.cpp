#include "fuse_mounts/common/storage_rest_session.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <nlohmann/json.hpp>
#include <system_error>
#include <optional>
#include <stdexcept>

#include "common/crypto/base64.h"
#include "common/text/percent_encoding.h"
#include "common/time/timestamps.h"
#include "fake_storage/auth/shared_key_signer.h"
#include "fake_storage/engine/storage_error.h"
#include "fake_storage/http/change_feed.h"
#include "fuse_mounts/blob/blob_rest_answers.h"

namespace bai::mounts {

namespace {

using storage::StorageError;

constexpr const char* kVersion = "2021-06-08";
constexpr int kFeedWaitSeconds = 20;

void write_all(int fd, const char* data, size_t size) {
    while (size > 0) {
        const ssize_t n = ::write(fd, data, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw std::system_error(errno ? errno : EIO, std::generic_category(), "cannot keep the download");
        data += n;
        size -= static_cast<size_t>(n);
    }
}

}  // namespace

std::string read_staged(int fd, std::uint64_t offset, std::uint64_t size) {
    std::string bytes(size, '\0');
    std::uint64_t done = 0;
    while (done < size) {
        const ssize_t n = ::pread(fd, bytes.data() + done, size - done, static_cast<off_t>(offset + done));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw std::system_error(errno, std::generic_category(), "cannot read the staged file");
        if (n == 0) break;
        done += static_cast<std::uint64_t>(n);
    }
    if (done != size) throw std::runtime_error("the staged file shrank while it was committed");
    return bytes;
}

StorageRestSession::StorageRestSession(StorageRestSettings settings, StorageRestKeys keys)
    : settings_(std::move(settings)), keys_(keys) {
    const std::string& url = settings_.endpoint;
    const bool https = url.rfind("https://", 0) == 0;
    if (!https && url.rfind("http://", 0) != 0) {
        throw std::invalid_argument(std::string(keys_.endpoint) + ": not an http(s):// URL: '" + url + "'");
    }
    const size_t slash = url.find('/', url.find("//") + 2);
    origin_ = url.substr(0, slash);
    base_path_ = slash == std::string::npos ? "" : url.substr(slash);
    while (!base_path_.empty() && base_path_.back() == '/') base_path_.pop_back();
    if (settings_.account.empty()) throw std::invalid_argument("accountName: missing");
    if (settings_.container.empty()) throw std::invalid_argument(std::string(keys_.volume) + ": missing");
    if (settings_.key.empty() == settings_.sas.empty()) throw std::invalid_argument("accountKey or sasToken: give one");
    if (!settings_.key.empty() && !crypto::base64_decode(settings_.key)) throw std::invalid_argument("accountKey: not base64");
    if (!settings_.sas.empty() && settings_.sas.front() == '?') settings_.sas.erase(0, 1);
    if (!client()->is_valid()) throw std::invalid_argument(std::string(keys_.endpoint) + ": cannot use '" + url + "'");
}

StorageRestSession::~StorageRestSession() {
    if (!follower_.joinable()) return;
    std::unique_lock lock(stop_mutex_);
    stopping_ = true;
    stop_cv_.notify_all();
    // The long poll in flight is stopped by shutting its socket; a stop that comes before the
    // poll has opened one stops nothing, and the poll would hold the follower for its whole wait
    // (20 s): asked again until the follower has left.
    while (!follower_left_) {
        if (feed_) feed_->stop();
        stop_cv_.wait_for(lock, std::chrono::milliseconds(50));
    }
    lock.unlock();
    follower_.join();
}

std::unique_ptr<httplib::Client> StorageRestSession::client() const {
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

std::string StorageRestSession::target(const std::string& name, const std::string& query) const {
    std::string t = base_path_ + "/" + text::percent_encode(settings_.container);
    if (!name.empty()) t += "/" + text::percent_encode(name, true);
    std::string q = query;
    if (!settings_.sas.empty()) q += (q.empty() ? "" : "&") + settings_.sas;
    return q.empty() ? t : t + "?" + q;
}

void StorageRestSession::sign(httplib::Request& request, long long content_length) const {
    request.target = request.path;
    if (!settings_.key.empty()) {
        storage::sign_shared_key(request, settings_.account, settings_.key, content_length);
    } else {  // the SAS is in the target
        request.set_header("x-ms-date", time::format_rfc1123(time::now()));
        request.set_header("x-ms-version", kVersion);
    }
    request.path = request.target;
}

httplib::Result StorageRestSession::send(httplib::Request request, long long content_length) {
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
            throw StorageError(503, "ServerUnreachable", std::string("cannot reach the ") + keys_.service +
                                                             " service at " + origin_ + ": " +
                                                             httplib::to_string(result.error()));
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

storage::OpenBlob StorageRestSession::download_whole(
    const std::string& name, const char* operation, const std::function<storage::BlobInfo(const httplib::Response&)>& info_of) {
    const int fd = ::open(settings_.staging_dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
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
    storage::OpenBlob whole;
    whole.info = info_of(*result);
    part.size = whole.info.size;
    if (::lseek(fd, 0, SEEK_END) != static_cast<off_t>(whole.info.size)) {
        throw StorageError(502, "IncompleteBody", std::string(operation) + " of " + name + " ended before its Content-Length");
    }
    whole.parts.push_back(std::move(part));
    return whole;
}

void StorageRestSession::follow(const std::string& restype, storage::StoreChanges& changes) {
    if (follower_.joinable()) throw std::logic_error("the change feed is followed already");
    follower_ = std::thread([this, restype, &changes] { follow_loop(restype, &changes); });
}

void StorageRestSession::follow_loop(std::string restype, storage::StoreChanges* changes) {
    struct Leaving {
        StorageRestSession& session;
        ~Leaving() {
            std::lock_guard guard(session.stop_mutex_);
            session.follower_left_ = true;
            session.stop_cv_.notify_all();
        }
    } leaving{*this};
    std::optional<std::uint64_t> since;
    std::string epoch;
    bool unreachable = false;
    for (;;) {
        {
            std::lock_guard guard(stop_mutex_);
            if (stopping_) return;
            feed_ = client();
        }
        std::string query = "restype=" + restype + "&comp=" + storage::kChangesComp;
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
            unreachable = true;  // the volume gone (404) counts too: everything changed
            if (result && result->status == 404) everything = true;
        }
        if (everything) changes->publish(settings_.account, settings_.container, "");
        for (const std::string& path : paths) changes->publish(settings_.account, settings_.container, path);
        if (!result || result->status != 200) {
            std::unique_lock lock(stop_mutex_);
            stop_cv_.wait_for(lock, std::chrono::seconds(1), [this] { return stopping_; });
        }
    }
}

}  // namespace bai::mounts
