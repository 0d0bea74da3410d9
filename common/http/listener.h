// One HTTP(S) endpoint: a bound server socket and the thread that serves it.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "common/http/endpoint.h"
#include "common/http/request_log.h"

namespace bai::http {

// An endpoint served by httplib (ARM and Batch: routes by regular expression, TLS).
class Listener : public Endpoint {
public:
    // `name` is used in messages and in the request log ("blob", "arm"...). Routes are set by the
    // caller on server() before start(); the listener owns the pre-routing handler and logger.
    Listener(std::string name, std::unique_ptr<httplib::Server> server,
             std::shared_ptr<RequestLog> request_log = nullptr);
    ~Listener() override;
    Listener(const Listener&) = delete;
    Listener& operator=(const Listener&) = delete;

    bool bind(const std::string& host, int port) override;
    // Returns once the serving thread serves, so that a stop right after it takes effect.
    void start() override;
    void stop_accepting() override;
    void finish(std::chrono::steady_clock::time_point deadline) override;
    int port() const override { return port_; }
    const std::string& name() const override { return name_; }
    const std::string& error() const override { return error_; }
    httplib::Server& server() { return *server_; }

private:
    std::string name_;
    std::unique_ptr<httplib::Server> server_;
    std::shared_ptr<RequestLog> request_log_;
    std::thread thread_;
    std::atomic<int> in_flight_{0};
    std::atomic<bool> listen_returned_{false};
    int port_ = -1;
    std::string error_;
};

// {"status":"ok","service":SERVICE,"version":V}: what GET /health answers.
std::string health_json(const std::string& service);
// Answers GET /health with 200 and health_json(service).
void add_health_route(httplib::Server& server, const std::string& service);

}  // namespace bai::http
