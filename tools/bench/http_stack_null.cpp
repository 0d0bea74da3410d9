// Two HTTP stacks with the same trivial handler, for tools/bench/http_stacks.py: the project's
// lean listener (common/http/lean_listener: a thread per connection) and Boost.Beast on Asio (an
// io_context run by one thread per core, asynchronous reads and writes, the layout of Beast's own
// http_server_async example). The handler answers GET with a 4 KiB body and the Get Blob headers
// the emulator sends, and PUT with 201 once the body is read, so a load generator measures what
// each stack costs a request and nothing else.
//
//   http_stack_null lean|beast   (prints the port it listens on, serves until killed)
// Boost 1.74's asio/awaitable.hpp uses std::exchange without including <utility>.
#include <optional>
#include <utility>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <csignal>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/http/lean_listener.h"

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = asio::ip::tcp;

const std::string kBody(4096, 'x');

// The Get Blob headers of the emulator, but Content-Length (each stack adds its own).
const std::vector<std::pair<std::string, std::string>> kHeaders = {
    {"Accept-Ranges", "bytes"},
    {"Content-MD5", "IEOfeeTp3JW+NLIQKSIfgA=="},
    {"Content-Type", "application/octet-stream"},
    {"Date", "Mon, 23 Nov 2026 21:56:23 GMT"},
    {"ETag", "\"0x47C9B6A60A9663\""},
    {"Last-Modified", "Mon, 23 Nov 2026 21:56:23 GMT"},
    {"Server", "batchai-emulator-blob"},
    {"x-ms-blob-type", "BlockBlob"},
    {"x-ms-creation-time", "Mon, 23 Nov 2026 21:56:23 GMT"},
    {"x-ms-lease-state", "available"},
    {"x-ms-lease-status", "unlocked"},
    {"x-ms-request-id", "49b205a9-504a-4298-8617-c30613d176e8"},
    {"x-ms-server-encrypted", "true"},
    {"x-ms-version", "2021-06-08"},
};

int serve_lean() {
    bai::http::LeanListener listener("null", [](const httplib::Request& req, httplib::Response& res,
                                                const httplib::ContentReader* body) {
        if (body != nullptr) {
            (*body)([](const char*, size_t) { return true; });
            res.status = 201;
            return;
        }
        for (const auto& [name, value] : kHeaders) res.headers.emplace(name, value);
        if (req.method == "GET") res.body = kBody;
    });
    if (!listener.bind("127.0.0.1", 0)) {
        std::fprintf(stderr, "%s\n", listener.error().c_str());
        return 1;
    }
    listener.start();
    std::printf("%d\n", listener.port());
    std::fflush(stdout);
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
}

class BeastSession : public std::enable_shared_from_this<BeastSession> {
public:
    explicit BeastSession(tcp::socket socket) : stream_(std::move(socket)) {}
    void start() {
        asio::dispatch(stream_.get_executor(), beast::bind_front_handler(&BeastSession::read, shared_from_this()));
    }

private:
    void read() {
        parser_.emplace();
        parser_->header_limit(64 * 1024);
        parser_->body_limit(64 << 20);
        stream_.expires_after(std::chrono::seconds(30));
        bhttp::async_read(stream_, buffer_, *parser_, beast::bind_front_handler(&BeastSession::answer, shared_from_this()));
    }
    void answer(beast::error_code ec, size_t) {
        if (ec) return close();
        const auto& req = parser_->get();
        response_ = {};
        response_.version(req.version());
        response_.keep_alive(req.keep_alive());
        if (req.method() == bhttp::verb::put) {
            response_.result(bhttp::status::created);
        } else {
            response_.result(bhttp::status::ok);
            for (const auto& [name, value] : kHeaders) response_.set(name, value);
            if (req.method() == bhttp::verb::get) response_.body() = kBody;
        }
        response_.prepare_payload();
        bhttp::async_write(stream_, response_, beast::bind_front_handler(&BeastSession::written, shared_from_this()));
    }
    void written(beast::error_code ec, size_t) {
        if (ec || !response_.keep_alive()) return close();
        read();
    }
    void close() {
        beast::error_code ignored;
        stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    }

    beast::tcp_stream stream_;
    beast::flat_buffer buffer_;
    std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
    bhttp::response<bhttp::string_body> response_;
};

void accept(tcp::acceptor& acceptor, asio::io_context& io) {
    acceptor.async_accept(asio::make_strand(io), [&](beast::error_code ec, tcp::socket socket) {
        if (!ec) {
            socket.set_option(tcp::no_delay(true));
            std::make_shared<BeastSession>(std::move(socket))->start();
        }
        accept(acceptor, io);
    });
}

int serve_beast() {
    const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    asio::io_context io(static_cast<int>(threads));
    tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    std::printf("%d\n", acceptor.local_endpoint().port());
    std::fflush(stdout);
    accept(acceptor, io);
    std::vector<std::thread> pool;
    for (unsigned i = 1; i < threads; ++i) pool.emplace_back([&] { io.run(); });
    io.run();
    for (auto& t : pool) t.join();
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    std::signal(SIGPIPE, SIG_IGN);
    std::string stack = argc > 1 ? argv[1] : "";
    if (stack == "lean") return serve_lean();
    if (stack == "beast") return serve_beast();
    std::fprintf(stderr, "usage: http_stack_null lean|beast\n");
    return 2;
}
