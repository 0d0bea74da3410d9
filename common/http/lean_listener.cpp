#include "common/http/lean_listener.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <optional>
#include <cstring>
#include <string_view>
#include <system_error>
#include <vector>

#include "common/http/quick_client_wait.h"
#include "common/http/request_head.h"
#include "common/log/logger.h"
#include "common/memory/release_free_memory.h"
#include "common/text/ascii.h"
#include "common/version.h"

namespace bai::http {

const char* reason_phrase(int status) {
    switch (status) {
        case 100: return "Continue";
        case 200: return "OK";
        case 201: return "Created";
        case 202: return "Accepted";
        case 204: return "No Content";
        case 206: return "Partial Content";
        case 304: return "Not Modified";
        case 400: return "Bad Request";
        case 401: return "Unauthorized";
        case 403: return "Forbidden";
        case 404: return "Not Found";
        case 405: return "Method Not Allowed";
        case 409: return "Conflict";
        case 411: return "Length Required";
        case 412: return "Precondition Failed";
        case 413: return "Request Entity Too Large";
        case 416: return "Requested Range Not Satisfiable";
        case 417: return "Expectation Failed";
        case 431: return "Request Header Fields Too Large";
        case 500: return "Internal Server Error";
        case 501: return "Not Implemented";
        case 503: return "Service Unavailable";
        case 505: return "HTTP Version Not Supported";
        default: return status < 300 ? "OK" : status < 500 ? "Bad Request" : "Internal Server Error";
    }
}

namespace {

// The listener binds IPv4 addresses only (bind()), so its connections' ends are IPv4 too.
std::string address_of(const sockaddr_in& address, int& port) {
    char text[INET_ADDRSTRLEN] = "";
    inet_ntop(AF_INET, &address.sin_addr, text, sizeof text);
    port = ntohs(address.sin_port);
    return text;
}

// A connection's first byte, waited for up to `seconds`: 0x16 opens a TLS handshake record
// (no HTTP method starts with it).
bool offers_tls(int fd, int seconds) {
    pollfd p{fd, POLLIN, 0};
    int ready;
    do {
        ready = ::poll(&p, 1, seconds * 1000);
    } while (ready < 0 && errno == EINTR);
    unsigned char first = 0;
    return ready > 0 && ::recv(fd, &first, 1, MSG_PEEK) == 1 && first == 0x16;
}

thread_local bool tls_connection = false;
thread_local std::string tunnel_authority_served;

}  // namespace

bool LeanListener::serving_tls() { return tls_connection; }

const std::string& LeanListener::tunnel_authority() { return tunnel_authority_served; }

// One accepted connection: what has been read of it and not yet consumed, and the writes.
class Connection {
public:
    // `ssl`: the connection's TLS session (owned), or null for plain HTTP.
    Connection(int fd, SSL* ssl) : fd_(fd), ssl_(ssl) {
        sockaddr_in address{};
        socklen_t size = sizeof address;
        if (getpeername(fd, reinterpret_cast<sockaddr*>(&address), &size) == 0) {
            remote_addr = address_of(address, remote_port);
        }
        size = sizeof address;
        if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) == 0) {
            local_addr = address_of(address, local_port);
        }
    }

    ~Connection() {
        if (ssl_ != nullptr) {
            SSL_shutdown(ssl_);  // the close_notify alert; the peer's is not waited for
            SSL_free(ssl_);
        }
    }
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;

    std::string remote_addr;
    int remote_port = -1;
    std::string local_addr;
    int local_port = -1;

    // Waits up to `milliseconds` for bytes and reads up to `chunk` of what is there; false at the
    // end of the stream, on a timeout or an error. `ready`: a plain connection's bytes (or its
    // end) were just seen there: read without waiting first (and waited for as usual if, after
    // all, nothing is there to read).
    bool fill(int milliseconds, size_t chunk = kHeadRead, bool ready = false) {
        // TLS may hold decrypted bytes of a record already read from the socket.
        if (!ready && (ssl_ == nullptr || SSL_pending(ssl_) == 0)) {
            pollfd p{fd_, POLLIN, 0};
            int polled;
            do {
                polled = ::poll(&p, 1, std::max(milliseconds, 0));
            } while (polled < 0 && errno == EINTR);
            if (polled <= 0) return false;
        }
        compact();
        // Grown (and zeroed) only when what is read does not fit what it already holds: a
        // connection that sent nothing holds no buffer, one that reads heads a small one.
        if (in_.size() - end_ < chunk) in_.resize(end_ + chunk);
        ssize_t n;
        if (ssl_ != nullptr) {
            n = SSL_read(ssl_, in_.data() + end_, static_cast<int>(chunk));
        } else {
            do {
                n = ::recv(fd_, in_.data() + end_, chunk, ready ? MSG_DONTWAIT : 0);
            } while (n < 0 && errno == EINTR);
            if (ready && n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return fill(milliseconds, chunk);
        }
        if (n <= 0) return false;
        end_ += static_cast<size_t>(n);
        return true;
    }

    // The next request's head, up to and including its blank line; empty when the connection
    // ended, went idle first, or took longer than kHeadSeconds from its first byte (a client that
    // trickles its head holds its connection for that long at most); `too_large` when it passed
    // kMaxHead.
    std::string_view read_head(bool& too_large) {
        too_large = false;
        size_t searched = 0;
        using clock = std::chrono::steady_clock;
        std::optional<clock::time_point> deadline;
        for (bool first = true;; first = false) {
            std::string_view have = unread();
            size_t start = searched >= 3 ? searched - 3 : 0;
            if (size_t end = have.find("\r\n\r\n", start); end != std::string_view::npos) {
                if (end + 4 > LeanListener::kMaxHead) break;
                consume(end + 4);
                return have.substr(0, end + 4);
            }
            searched = have.size();
            if (have.size() > LeanListener::kMaxHead) break;
            bool idle = first && have.empty();
            if (!idle && !deadline) deadline = clock::now() + std::chrono::seconds(LeanListener::kHeadSeconds);
            int wait = idle ? LeanListener::kIdleSeconds * 1000
                            : static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - clock::now()).count());
            if (idle) next_request_.waits();
            const bool ready = idle && ssl_ == nullptr && next_request_.spin(fd_);
            if (wait <= 0 || !fill(wait, kHeadRead, ready)) return {};
            if (idle) next_request_.arrived();
        }
        too_large = true;
        return {};
    }

    // Hands `receiver` the body's bytes as they come; false when the connection fails, the
    // framing is broken or the receiver says stop (the rest is then unread).
    bool read_body(const BodyFraming& framing, const httplib::ContentReceiver& receiver) {
        if (!framing.chunked) return read_exactly(framing.length, receiver);
        for (;;) {
            std::string line;
            if (!read_line(line)) return false;
            std::optional<std::uint64_t> size = parse_chunk_size(line);
            if (!size) return false;
            if (*size == 0) break;
            if (!read_exactly(*size, receiver)) return false;
            if (!read_line(line) || !line.empty()) return false;
        }
        // Trailer fields, up to the blank line.
        for (std::string line;;) {
            if (!read_line(line)) return false;
            if (line.empty()) return true;
        }
    }

    bool send_all(std::string_view bytes) {
        while (!bytes.empty()) {
            if (ssl_ != nullptr) {
                int n = SSL_write(ssl_, bytes.data(), static_cast<int>(std::min<size_t>(bytes.size(), 1 << 30)));
                if (n <= 0) return false;
                bytes.remove_prefix(static_cast<size_t>(n));
                continue;
            }
            ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return false;
            bytes.remove_prefix(static_cast<size_t>(n));
        }
        return true;
    }

private:
    static constexpr size_t kReadSize = 256 * 1024;  // the most one read of a body takes
    static constexpr size_t kHeadRead = 16 * 1024;   // one read of a head or a line

public:
    // The response went out without the request's body being read (refused for its size): the
    // client may still be sending it, and closing at once would make its kernel answer our close
    // with a reset that destroys the response before the client reads it. So our side of the
    // connection is shut and what still comes is read and dropped, for at most two seconds
    // ("lingering close").
    bool linger = false;
    void linger_close() {
        if (ssl_ != nullptr) SSL_shutdown(ssl_);
        ::shutdown(fd_, SHUT_WR);
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
        char sink[16384];
        for (;;) {
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
            pollfd p{fd_, POLLIN, 0};
            if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) return;
            if (::recv(fd_, sink, sizeof sink, 0) <= 0) return;
        }
    }

    // Whether bytes were read that no request has consumed yet.
    bool has_unread() const { return end_ > read_; }
    bool is_tls() const { return ssl_ != nullptr; }
    int fd() const { return fd_; }
    // The connection goes on in `ssl` (owned from now on): a tunnel's handshake has just run with
    // `context`, which is kept as long as the connection (its callbacks' data with it).
    void start_tls(SSL* ssl, TlsContext context) {
        ssl_ = ssl;
        context_ = std::move(context);
    }

    // Between requests: a buffer grown for a large body is given back.
    void release_if_empty() {
        if (read_ == end_ && in_.size() > kHeadRead) {
            std::vector<char>().swap(in_);
            read_ = end_ = 0;
        }
    }

private:

    std::string_view unread() const { return std::string_view(in_.data() + read_, end_ - read_); }
    void consume(size_t n) { read_ += n; }
    void compact() {
        if (read_ == 0) return;
        std::memmove(in_.data(), in_.data() + read_, end_ - read_);
        end_ -= read_;
        read_ = 0;
    }

    bool read_exactly(std::uint64_t length, const httplib::ContentReceiver& receiver) {
        while (length > 0) {
            std::string_view have = unread();
            if (have.empty()) {
                size_t chunk = static_cast<size_t>(std::min<std::uint64_t>(length, kReadSize));
                if (!fill(LeanListener::kTransferSeconds * 1000, std::max(chunk, kHeadRead))) return false;
                continue;
            }
            size_t n = static_cast<size_t>(std::min<std::uint64_t>(length, have.size()));
            consume(n);
            length -= n;
            if (!receiver(have.data(), n)) return false;
        }
        return true;
    }

    bool read_line(std::string& line) {
        for (;;) {
            std::string_view have = unread();
            if (size_t end = have.find("\r\n"); end != std::string_view::npos) {
                line.assign(have.substr(0, end));
                consume(end + 2);
                return true;
            }
            if (have.size() > 4096 || !fill(LeanListener::kTransferSeconds * 1000)) return false;
        }
    }

    int fd_;
    SSL* ssl_;
    TlsContext context_;  // a tunnel's (the destructor frees the session before it)
    QuickClientWait next_request_;
    std::vector<char> in_;  // bytes [read_, end_) are read from the socket and not yet consumed
    size_t read_ = 0;
    size_t end_ = 0;
};

namespace {

// Whether an answer of `status` to `request` carries a body: not to HEAD, not 204, 304 or 1xx.
bool carries_body(const httplib::Request& request, int status) {
    return request.method != "HEAD" && status != 204 && status != 304 && status >= 200;
}

// Writes the status line and headers in one send, with the body when it is in memory; a
// content provider's bytes follow. False when the connection cannot go on.
bool write_response(Connection& connection, const httplib::Request& request, httplib::Response& response,
                    bool keep_alive) {
    if (response.status < 0) response.status = 200;
    const int status = response.status;
    const bool has_body = carries_body(request, status);
    std::uint64_t length = response.content_provider_ ? response.content_length_ : response.body.size();
    std::string out;
    out.reserve(640 + (response.content_provider_ || !has_body ? 0 : response.body.size()));
    out += "HTTP/1.1 ";
    out += std::to_string(status);
    out += ' ';
    // A handler's own reason phrase (the proxy's refusals name the host there: a client that shows
    // only a CONNECT answer's status line still says why), else the standard one.
    bool own_reason = !response.reason.empty();
    for (char c : response.reason) own_reason = own_reason && c != '\r' && c != '\n';
    out += own_reason ? std::string_view(response.reason) : std::string_view(reason_phrase(status));
    out += "\r\n";
    bool has_length = false;
    bool has_connection = false;
    for (const auto& [name, value] : response.headers) {
        if (!has_length && text::iequals(name, "Content-Length")) has_length = true;
        if (!has_connection && text::iequals(name, "Connection")) has_connection = true;
        out += name;
        out += ": ";
        out += value;
        out += "\r\n";
    }
    if (!has_length && status != 204 && status != 304) {
        out += "Content-Length: ";
        out += std::to_string(length);
        out += "\r\n";
    }
    if (!keep_alive && !has_connection) out += "Connection: close\r\n";
    // How long an idle connection stays open: clients that read it (Node's agent, as Node's own
    // server sends it) stop reusing a connection before it is closed under them.
    static const std::string kKeepAlive = "Keep-Alive: timeout=" + std::to_string(LeanListener::kIdleSeconds) + "\r\n";
    if (keep_alive && !has_connection) out += kKeepAlive;
    out += "\r\n";
    if (!has_body || length == 0) return connection.send_all(out);
    if (!response.content_provider_) {
        out += response.body;
        return connection.send_all(out);
    }
    if (!connection.send_all(out)) return false;
    std::uint64_t offset = 0;
    bool failed = false;
    httplib::DataSink sink;
    sink.write = [&](const char* data, size_t size) {
        if (failed || !connection.send_all(std::string_view(data, size))) {
            failed = true;
            return false;
        }
        offset += size;
        return true;
    };
    sink.is_writable = [&] { return !failed; };
    sink.done = [] {};
    while (offset < length && !failed) {
        std::uint64_t before = offset;
        if (!response.content_provider_(offset, length - offset, sink) || offset == before) failed = true;
    }
    response.content_provider_success_ = !failed;
    return !failed;
}

}  // namespace

LeanListener::LeanListener(std::string name, Handler handler, std::shared_ptr<RequestLog> request_log)
    : name_(std::move(name)),
      handler_(std::move(handler)),
      request_log_(std::move(request_log)),
      health_body_(health_json(name_)) {}

LeanListener::~LeanListener() { stop(); }

bool LeanListener::bind(const std::string& host, int port) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    int fd = -1;
    int one = 1;
    auto failed = [&](const char* what) {
        int saved = errno;
        if (fd >= 0) ::close(fd);
        error_ = "cannot listen on " + host + ":" + std::to_string(port) + " (" + name_ + "): " + what +
                 (saved != 0 ? std::string(": ") + std::strerror(saved) : "");
        return false;
    };
    errno = 0;
    if (inet_pton(AF_INET, host.c_str(), &address.sin_addr) != 1) return failed("not an IPv4 address");
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return failed("socket");
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) return failed("address unavailable");
    if (::listen(fd, 128) != 0) return failed("listen");
    socklen_t size = sizeof address;
    getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size);
    listen_fd_ = fd;
    port_ = ntohs(address.sin_port);
    return true;
}

void LeanListener::start() {
    if (listen_fd_ < 0 || accept_thread_.joinable()) return;
    stopping_ = false;
    accept_thread_ = std::thread([this] { accept_loop(); });
}

void LeanListener::stop_accepting() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
        changed_.notify_all();
    }
    if (listen_fd_ >= 0) ::shutdown(listen_fd_, SHUT_RDWR);  // wakes accept()
}

void LeanListener::finish(std::chrono::steady_clock::time_point deadline) {
    while (in_flight_ > 0 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (accept_thread_.joinable()) accept_thread_.join();
    std::unique_lock lock(mutex_);
    // Idle connections wait in poll() and busy ones in recv() or send(): this wakes both.
    for (int fd : connections_) ::shutdown(fd, SHUT_RDWR);
    changed_.wait(lock, [&] { return serving_ == 0; });
    if (listen_fd_ >= 0) {
        ::close(listen_fd_);
        listen_fd_ = -1;
    }
}

void LeanListener::accept_loop() {
    for (;;) {
        if (!refuse_when_full_) {
            std::unique_lock lock(mutex_);
            changed_.wait(lock, [&] { return stopping_ || serving_ < static_cast<int>(kMaxConnections); });
        }
        if (stopping_) return;
        int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) {
            if (stopping_) return;
            if (errno == EMFILE || errno == ENFILE) std::this_thread::sleep_for(std::chrono::milliseconds(10));
            continue;
        }
        std::lock_guard lock(mutex_);
        if (stopping_) {
            ::close(fd);
            return;
        }
        if (refuse_when_full_ && serving_ >= static_cast<int>(kMaxConnections)) {
            // Answered before anything is read (the request is not needed to refuse it); a client
            // whose request is still coming may see a reset instead, never a wait.
            static constexpr std::string_view kFull =
                "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 1\r\n"
                "Content-Type: text/plain\r\nContent-Length: 57\r\n\r\n"
                "Too many connections at once: try again when some close.\n";
            [[maybe_unused]] ssize_t sent = ::send(fd, kFull.data(), kFull.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
            ::close(fd);
            continue;
        }
        try {
            std::thread([this, fd] { serve(fd); }).detach();
        } catch (const std::system_error& e) {  // no thread to be had now: this client waits for none
            log::warning(name_ + ": cannot serve a connection: " + e.what());
            ::close(fd);
            continue;
        }
        connections_.insert(fd);
        ++serving_;
    }
}

void LeanListener::serve(int fd) {
    // OpenSSL writes with write(2), not send(MSG_NOSIGNAL): a client gone mid-response would raise
    // SIGPIPE, which ends a process that does not ignore it. Blocked in this thread, it stays
    // pending here and goes with the thread; the write fails with EPIPE as it should.
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    // Reads wait in poll() with their own timeouts (Connection::fill); sends need this one.
    timeval timeout{kTransferSeconds, 0};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    SSL* ssl = nullptr;
    const bool use_tls = tls_ && (!tls_optional_ || offers_tls(fd, kHandshakeSeconds));
    tls_connection = use_tls;
    tunnel_authority_served.clear();
    if (use_tls) {
        // A TLS read waits in poll() first too, but a record that arrives in pieces is read
        // inside SSL_read: this bounds that wait.
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
        ssl = accept_tls(tls_.get(), fd, std::chrono::steady_clock::now() + std::chrono::seconds(kHandshakeSeconds));
    }
    if (!use_tls || ssl != nullptr) {
        Connection connection(fd, ssl);
        while (!stopping_ && serve_one(connection)) connection.release_if_empty();
        if (connection.linger) connection.linger_close();
    }
    bool last = false;
    {
        std::lock_guard lock(mutex_);
        connections_.erase(fd);
        ::close(fd);
        last = --serving_ == 0 && !stopping_;
        changed_.notify_all();
    }
    // Nothing else is served: what the connections' threads freed goes back to the system.
    // `this` may be gone by now (finish() returns once serving_ is 0); only locals are used.
    if (last) memory::release_free_memory();
}

bool LeanListener::bodiless(const httplib::Request& request) {
    return request.method == "GET" || request.method == "HEAD" || request.method == "OPTIONS";
}

template <typename ReadSmallBody, typename Then>
void LeanListener::dispatch(httplib::Request& request, httplib::Response& response, ReadSmallBody read_small_body,
                            const httplib::ContentReader* body, Then then) {
    try {
        if (bodiless(request) && request.path == "/health") {
            response.set_content(health_body_, "application/json");
        } else if (bodiless(request)) {
            read_small_body();
            handler_(request, response, nullptr);
        } else {
            handler_(request, response, body);
        }
        then();
    } catch (const std::exception& e) {
        log::error(name_ + " " + request.method + " " + request.target + ": " + e.what());
        response = httplib::Response();
        response.status = 500;
    }
}

void LeanListener::log_request(const httplib::Request& request, int status, std::chrono::steady_clock::time_point started) {
    if (!request_log_) return;
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    request_log_->record(name_, request.method, request.target, status, ms);
}

bool LeanListener::serve_one(Connection& connection) {
    bool too_large = false;
    std::string_view head = connection.read_head(too_large);
    httplib::Request request;
    httplib::Response response;
    BodyFraming framing;
    if (head.empty()) {
        if (too_large) {
            response.status = 431;
            write_response(connection, request, response, false);
        }
        return false;
    }
    if (auto error = parse_request_head(head, request, framing)) {
        response.status = error->status;
        response.set_content(error->message, "text/plain");
        // Not the half-parsed request: its method (HEAD, say) must not keep the message back.
        write_response(connection, httplib::Request(), response, false);
        return false;
    }
    auto started = std::chrono::steady_clock::now();
    if (tunnel_opener_ && request.method == "CONNECT") return open_tunnel(connection, request, started);
    ++in_flight_;
    const QuickClientWait::Busy busy;
    request.remote_addr = connection.remote_addr;
    request.remote_port = connection.remote_port;
    request.local_addr = connection.local_addr;
    request.local_port = connection.local_port;

    bool body_done = framing.chunked ? false : framing.length == 0;
    bool body_failed = false;
    auto read_body = [&](const httplib::ContentReceiver& receiver) {
        if (body_done || body_failed) return body_done;
        bool ok = connection.read_body(framing, receiver);
        (ok ? body_done : body_failed) = true;
        return ok;
    };
    if (framing.expects_continue && !body_done) connection.send_all("HTTP/1.1 100 Continue\r\n\r\n");
    std::optional<httplib::ContentReader> reader;
    if (!bodiless(request)) reader.emplace(read_body, [](httplib::MultipartContentHeader, httplib::ContentReceiver) { return false; });
    dispatch(
        request, response,
        [&] {
            bool too_much = false;
            read_body([&](const char* data, size_t size) {
                too_much = request.body.size() + size > (4u << 20);
                if (!too_much) request.body.append(data, size);
                return !too_much;
            });
        },
        reader ? &*reader : nullptr, [] {});
    // What the handler left of the body is read and dropped, so that the next request starts
    // where it should; a body that cannot be read to its end ends the connection, and so does a
    // handler that answers "Connection: close" (a body refused for its size is not read at all).
    const bool handler_closes = text::iequals(response.get_header_value("Connection"), "close");
    if (!body_done && !body_failed && !handler_closes) read_body([](const char*, size_t) { return true; });
    const bool keep_alive = framing.keep_alive && body_done && !stopping_ && !handler_closes;
    connection.linger = handler_closes && !body_done && !body_failed;
    bool sent = write_response(connection, request, response, keep_alive);
    --in_flight_;
    log_request(request, response.status, started);
    return sent && keep_alive;
}

bool LeanListener::open_tunnel(Connection& connection, const httplib::Request& request,
                               std::chrono::steady_clock::time_point started) {
    auto refuse = [&](httplib::Response refusal) {
        write_response(connection, request, refusal, false);
        log_request(request, refusal.status, started);
        return false;
    };
    if (connection.is_tls()) {
        httplib::Response nested;
        nested.status = 400;
        nested.set_content("A tunnel cannot be opened inside a tunnel or a TLS connection.\n", "text/plain");
        return refuse(std::move(nested));
    }
    TunnelOpening opening = tunnel_opener_(request.target);
    if (!opening.tls) return refuse(std::move(opening.refusal));
    // A client that sent its handshake before it was answered has bytes here that the TLS
    // handshake would never see: it is not served (no client waits for less than the answer).
    if (connection.has_unread()) {
        httplib::Response early;
        early.status = 400;
        early.set_content("The TLS handshake came before the tunnel was established.\n", "text/plain");
        return refuse(std::move(early));
    }
    if (!connection.send_all("HTTP/1.1 200 Connection Established\r\n\r\n")) return false;
    log_request(request, 200, started);
    timeval timeout{kTransferSeconds, 0};
    setsockopt(connection.fd(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    SSL* ssl = accept_tls(opening.tls.get(), connection.fd(),
                          std::chrono::steady_clock::now() + std::chrono::seconds(kHandshakeSeconds));
    if (ssl == nullptr) return false;
    connection.start_tls(ssl, std::move(opening.tls));
    tls_connection = true;
    tunnel_authority_served = request.target;
    return !stopping_;
}

void LeanListener::answer(httplib::Request& request, httplib::Response& response) {
    const QuickClientWait::Busy busy;
    const auto started = std::chrono::steady_clock::now();
    struct TlsAsServed {  // serving_tls() as on a connection of this listener's, then as it was
        bool was = tls_connection;
        explicit TlsAsServed(bool now) { tls_connection = now; }
        ~TlsAsServed() { tls_connection = was; }
    } tls_as_served(tls_ && !tls_optional_);
    request.path = request.target.substr(0, request.target.find('?'));  // as parse_request_head sets it
    if (!request.has_header("Content-Length") && (!bodiless(request) || !request.body.empty())) {
        request.set_header("Content-Length", std::to_string(request.body.size()));
    }
    // The body of a request that has a reader is given through it as a connection's reader gives
    // it: once, then done (a bodiless request's stays in the request).
    std::string body;
    bool given = false;
    std::optional<httplib::ContentReader> reader;
    if (!bodiless(request)) {
        body = std::move(request.body);
        request.body.clear();
        reader.emplace(
            [&](const httplib::ContentReceiver& receiver) {
                if (given || body.empty()) return true;
                given = true;
                return receiver(body.data(), body.size());
            },
            [](httplib::MultipartContentHeader, httplib::ContentReceiver) { return false; });
    }
    dispatch(request, response, [] {}, reader ? &*reader : nullptr, [&] {
        if (response.status < 0) response.status = 200;
        if (response.content_provider_ && carries_body(request, response.status)) {
            std::string streamed;
            httplib::DataSink sink;
            sink.write = [&](const char* data, size_t size) {
                streamed.append(data, size);
                return true;
            };
            sink.is_writable = [] { return true; };
            sink.done = [] {};
            const std::uint64_t length = response.content_length_;
            while (streamed.size() < length) {
                const std::uint64_t before = streamed.size();
                if (!response.content_provider_(before, length - before, sink) || streamed.size() == before) break;
            }
            // (A connection's client would see the body end early: no answer it could use.)
            if (streamed.size() != length) throw std::runtime_error("the response's content provider ended before its length");
            response.content_provider_success_ = true;
            response.content_provider_ = nullptr;
            response.body = std::move(streamed);
        }
    });
    // As write_response sends it: no body where none is carried.
    if (!carries_body(request, response.status)) {
        response.body.clear();
        response.content_provider_ = nullptr;
    }
    log_request(request, response.status, started);
}

std::string health_json(const std::string& service) {
    return R"({"status":"ok","service":")" + service + R"(","version":")" + kVersion + R"("})";
}

}  // namespace bai::http
