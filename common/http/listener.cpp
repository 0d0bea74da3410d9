#include "common/http/listener.h"

#include <cerrno>
#include <cstring>

#include "common/http/connection_shutdown.h"
#include "common/version.h"

namespace bai::http {
namespace {

// httplib runs the pre-routing handler and the logger of one request on the same worker thread;
// the logger runs once the response has been written.
thread_local std::chrono::steady_clock::time_point request_started;

}  // namespace

Listener::Listener(std::string name, std::unique_ptr<httplib::Server> server,
                   std::shared_ptr<RequestLog> request_log)
    : name_(std::move(name)), server_(std::move(server)), request_log_(std::move(request_log)) {
    server_->set_tcp_nodelay(true);
    // httplib closes a keep-alive connection after 5 requests by default, which makes clients
    // fail a request, reconnect and retry every fifth time.
    server_->set_keep_alive_max_count(1000000);
    server_->set_pre_routing_handler([this](const httplib::Request&, httplib::Response&) {
        ++in_flight_;
        request_started = std::chrono::steady_clock::now();
        return httplib::Server::HandlerResponse::Unhandled;
    });
    server_->set_logger([this](const httplib::Request& req, const httplib::Response& res) {
        // Requests refused before routing (unparsable) were never counted in.
        int current = in_flight_.load();
        while (current > 0 && !in_flight_.compare_exchange_weak(current, current - 1)) {
        }
        if (!request_log_) return;
        auto elapsed = std::chrono::steady_clock::now() - request_started;
        double ms = std::chrono::duration<double, std::milli>(elapsed).count();
        request_log_->record(name_, req.method, req.target.empty() ? req.path : req.target,
                             res.status, ms);
    });
}

Listener::~Listener() { stop(); }

bool Listener::bind(const std::string& host, int port) {
    errno = 0;
    if (port == 0) {
        port_ = server_->bind_to_any_port(host);
    } else {
        port_ = server_->bind_to_port(host, port) ? port : -1;
    }
    if (port_ > 0) return true;
    int saved = errno;
    error_ = "cannot listen on " + host + ":" + std::to_string(port) + " (" + name_ + "): " +
             (saved != 0 ? std::strerror(saved) : "address unavailable");
    return false;
}

void Listener::start() {
    listen_returned_ = false;
    thread_ = std::thread([this] {
        server_->listen_after_bind();
        listen_returned_ = true;
    });
    // httplib's stop() does nothing until the serving thread has marked the server running; a
    // stop in between (a SIGTERM right after start-up) would leave that thread in accept()
    // forever. So start() returns only once the mark is set (or serving already ended).
    while (!server_->is_running() && !listen_returned_) std::this_thread::sleep_for(std::chrono::microseconds(50));
}

void Listener::stop_accepting() {
    if (thread_.joinable()) server_->stop();
}

void Listener::finish(std::chrono::steady_clock::time_point deadline) {
    if (!thread_.joinable()) return;
    while (in_flight_ > 0 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    shutdown_accepted_connections({port_});
    thread_.join();
}

std::string health_json(const std::string& service) {
    return R"({"status":"ok","service":")" + service + R"(","version":")" + kVersion + R"("})";
}

void add_health_route(httplib::Server& server, const std::string& service) {
    std::string body = health_json(service);
    server.Get("/health", [body](const httplib::Request&, httplib::Response& res) {
        res.set_content(body, "application/json");
    });
}

}  // namespace bai::http
