// One HTTP(S) endpoint: a bound server socket and the thread that serves it.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "common/http/request_log.h"

namespace bai::http {

class Listener {
public:
    // `name` is used in messages and in the request log ("blob", "arm"...). Routes are set by the
    // caller on server() before start(); the listener owns the pre-routing handler and logger.
    Listener(std::string name, std::unique_ptr<httplib::Server> server,
             std::shared_ptr<RequestLog> request_log = nullptr);
    ~Listener();
    Listener(const Listener&) = delete;
    Listener& operator=(const Listener&) = delete;

    // Binds host:port (port 0: an ephemeral one). Returns false and sets error() on failure.
    bool bind(const std::string& host, int port);
    // Serves on a thread of its own until stopped; returns once that thread serves, so that a
    // stop right after it takes effect.
    void start();

    // Stopping has two phases so that several listeners stop together: first no listener
    // accepts new connections, then each lets its requests in flight finish (until `deadline`),
    // closes its idle keep-alive connections and joins its threads.
    void stop_accepting();
    void finish(std::chrono::steady_clock::time_point deadline);
    void stop();

    // Answers GET, HEAD and OPTIONS requests (those httplib reads no body for) before httplib's
    // routing, whose regular expressions cost a small request more than its own work; `handler`
    // returns true when it answered, false to leave the request to the routes. Set before start().
    using DirectHandler = std::function<bool(const httplib::Request&, httplib::Response&)>;
    void set_direct_handler(DirectHandler handler) { direct_ = std::move(handler); }

    int port() const { return port_; }
    const std::string& name() const { return name_; }
    const std::string& error() const { return error_; }
    httplib::Server& server() { return *server_; }

private:
    std::string name_;
    std::unique_ptr<httplib::Server> server_;
    std::shared_ptr<RequestLog> request_log_;
    DirectHandler direct_;
    std::thread thread_;
    std::atomic<int> in_flight_{0};
    std::atomic<bool> listen_returned_{false};
    int port_ = -1;
    std::string error_;
};

// Answers GET /health with 200 and {"status":"ok","service":NAME,"version":V}.
void add_health_route(httplib::Server& server, const std::string& service);

}  // namespace bai::http
