// What the daemon does with each of its HTTP endpoints, whatever serves it.
#pragma once

#include <chrono>
#include <string>

namespace bai::http {

class Endpoint {
public:
    virtual ~Endpoint() = default;
    // Binds host:port (port 0: an ephemeral one). Returns false and sets error() on failure.
    virtual bool bind(const std::string& host, int port) = 0;
    // Serves on threads of its own until stopped.
    virtual void start() = 0;
    // Stopping has two phases so that several endpoints stop together: first none accepts new
    // connections, then each lets its requests in flight finish (until `deadline`), closes its
    // idle keep-alive connections and joins its threads.
    virtual void stop_accepting() = 0;
    virtual void finish(std::chrono::steady_clock::time_point deadline) = 0;
    void stop() {
        stop_accepting();
        finish(std::chrono::steady_clock::now() + std::chrono::seconds(2));
    }
    virtual int port() const = 0;
    virtual const std::string& name() const = 0;
    virtual const std::string& error() const = 0;
};

}  // namespace bai::http
