// The HTTP/1.1 endpoint of every service (Blob and File, and with routes.h, ARM over TLS and
// Batch): a thread per connection, a request parser of its own (request_head.h) and each
// response's head written in one send, with the body in the same send when it is small.
// (sendfile(2) for bodies kept in files was tried: on this project's VM it sent a 256 MiB blob
// at half the rate of pread and send through a 1 MiB buffer.) httplib's server spends more on a small request than the
// storage services do (header maps compared through tolower, a vsnprintf per response header,
// regular expressions for routing). The handler sees httplib's Request, Response and
// ContentReader, so that a service does not know which listener serves it.
#pragma once

#include <httplib.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "common/http/endpoint.h"
#include "common/http/request_log.h"
#include "common/http/tls_context.h"

namespace bai::http {

// The reason phrase of an HTTP status ("Accepted" for 202), as status lines carry it.
const char* reason_phrase(int status);

class Connection;

class LeanListener : public Endpoint {
public:
    // `body` is null for GET, HEAD and OPTIONS (whose body, if any, is in the request).
    using Handler = std::function<void(const httplib::Request&, httplib::Response&,
                                       const httplib::ContentReader* body)>;

    // Answers GET /health itself, as add_health_route does for httplib's servers.
    LeanListener(std::string name, Handler handler, std::shared_ptr<RequestLog> request_log = nullptr);
    ~LeanListener() override;
    LeanListener(const LeanListener&) = delete;
    LeanListener& operator=(const LeanListener&) = delete;

    // Serves HTTPS with `context` (before start()). `optional`: plain HTTP too, on the same port:
    // a connection whose first byte opens a TLS handshake gets one, any other is served as is
    // (the Batch endpoint: its SDK clients are given http:// URLs, az prefixes https://).
    void use_tls(TlsContext context, bool optional = false) {
        tls_ = std::move(context);
        tls_optional_ = optional;
    }
    // Whether the connection the calling thread serves is TLS (for a handler that writes URLs).
    static bool serving_tls();

    // Makes this listener a proxy's (before start()): a CONNECT request, a client asking for a
    // tunnel to the authority it names ("host:port"), is given to `opener`, which answers with
    // either the TLS context to serve the tunnel with or a refusal. Opened, the tunnel is
    // answered "200 Connection Established", the TLS handshake runs with this listener as the
    // server, and the requests that come through it go to the handler with tunnel_authority()
    // set. Refused, the refusal is sent and the connection closed. A listener without an opener
    // hands CONNECT to its handler like any other method.
    struct TunnelOpening {
        TlsContext tls;              // null: refused
        httplib::Response refusal;  // sent when refused
    };
    using TunnelOpener = std::function<TunnelOpening(const std::string& authority)>;
    void open_tunnels(TunnelOpener opener) { tunnel_opener_ = std::move(opener); }
    // With kMaxConnections connections open, a new one is answered 503 and closed at once instead
    // of waiting in the kernel's queue for one to end (before start()): for a proxy, whose
    // tunnels may all stay open for long.
    void refuse_when_full() { refuse_when_full_ = true; }
    // The authority of the CONNECT whose tunnel the calling thread serves ("" when none).
    static const std::string& tunnel_authority();

    // Answers a request handed over by this process, with no socket (a scenario's replay): on
    // the calling thread, as serve_one answers one read from a connection of this listener's (the
    // body, in request.body, is given to the handler as it would be read, its Content-Length set
    // where the request has none; serving_tls() true where the listener serves TLS only; the
    // request log records it). The response is left as the handler made it: a streamed body is
    // read into response.body (none for HEAD, 204 or 304, as none is sent; one that ends early is
    // a 500); no Content-Length, Connection or Keep-Alive header.
    void answer(httplib::Request& request, httplib::Response& response);

    bool bind(const std::string& host, int port) override;
    void start() override;
    void stop_accepting() override;
    void finish(std::chrono::steady_clock::time_point deadline) override;
    int port() const override { return port_; }
    const std::string& name() const override { return name_; }
    const std::string& error() const override { return error_; }

    static constexpr size_t kMaxHead = 64 * 1024;
    static constexpr size_t kMaxConnections = 1024;
    static constexpr int kIdleSeconds = 5;       // between requests of a keep-alive connection
    static constexpr int kHeadSeconds = 10;      // from a request head's first byte to its last
    static constexpr int kHandshakeSeconds = 10; // for a TLS handshake
    static constexpr int kTransferSeconds = 60;  // without progress within a body or a response

private:
    void accept_loop();
    void serve(int fd);
    bool serve_one(Connection& connection);
    // A CONNECT to a listener with a tunnel opener: whether the connection goes on (in the tunnel).
    bool open_tunnel(Connection& connection, const httplib::Request& request, std::chrono::steady_clock::time_point started);
    // GET, HEAD and OPTIONS: handed to the handler with no reader.
    static bool bodiless(const httplib::Request& request);
    // The handler's answer to a request, whether a connection read it (serve_one) or it was
    // handed over (answer): GET /health answered here; a bodiless request handed no reader
    // (`read_small_body()` first puts what body it has in the request), any other `body` (its
    // reader); `then()` after the handler. An exception from either is logged and answered 500.
    template <typename ReadSmallBody, typename Then>
    void dispatch(httplib::Request& request, httplib::Response& response, ReadSmallBody read_small_body,
                  const httplib::ContentReader* body, Then then);
    void log_request(const httplib::Request& request, int status, std::chrono::steady_clock::time_point started);

    std::string name_;
    Handler handler_;
    std::shared_ptr<RequestLog> request_log_;
    std::string health_body_;
    TlsContext tls_;
    bool tls_optional_ = false;
    TunnelOpener tunnel_opener_;
    bool refuse_when_full_ = false;
    int listen_fd_ = -1;
    int port_ = -1;
    std::string error_;
    std::thread accept_thread_;
    std::atomic<bool> stopping_{false};
    std::atomic<int> in_flight_{0};
    std::mutex mutex_;
    std::condition_variable changed_;
    std::set<int> connections_;  // open connections' descriptors
    int serving_ = 0;           // connection threads still running
};

// {"status":"ok","service":SERVICE,"version":V}: what GET /health answers.
std::string health_json(const std::string& service);

}  // namespace bai::http
