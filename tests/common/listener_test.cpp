#include "common/http/listener.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <thread>

namespace bai::http {
namespace {

using namespace std::chrono_literals;

// A stop that comes right after start (a signal during start-up) must end the serving thread.
TEST(Listener, AStopRightAfterStartEndsIt) {
    for (int i = 0; i < 200; ++i) {
        auto done = std::make_shared<std::promise<bool>>();
        std::future<bool> stopped = done->get_future();
        // Detached: were the stop lost, the test fails instead of waiting forever.
        std::thread([done] {
            Listener listener("test", std::make_unique<httplib::Server>());
            bool bound = listener.bind("127.0.0.1", 0);
            if (bound) {
                listener.start();
                listener.stop();
            }
            done->set_value(bound);
        }).detach();
        ASSERT_EQ(stopped.wait_for(10s), std::future_status::ready) << "round " << i;
        ASSERT_TRUE(stopped.get());
    }
}

// The direct handler answers bodiless requests before the routes; what it declines, and every
// request with a body, reaches them; keep-alive connections stay in step either way.
TEST(Listener, TheDirectHandlerAnswersBodilessRequestsBeforeTheRoutes) {
    auto server = std::make_unique<httplib::Server>();
    server->Get("/.*", [](const httplib::Request&, httplib::Response& res) { res.set_content("routed", "text/plain"); });
    server->Put("/.*", [](const httplib::Request& req, httplib::Response& res) {
        res.set_content("routed put " + req.body, "text/plain");
    });
    Listener listener("test", std::move(server));
    listener.set_direct_handler([](const httplib::Request& req, httplib::Response& res) {
        if (req.path == "/declined") return false;
        res.set_content("direct " + req.method, "text/plain");
        return true;
    });
    ASSERT_TRUE(listener.bind("127.0.0.1", 0));
    listener.start();
    httplib::Client client("127.0.0.1", listener.port());
    client.set_keep_alive(true);
    for (int round = 0; round < 2; ++round) {
        auto get = client.Get("/x");
        ASSERT_TRUE(get);
        EXPECT_EQ(get->body, "direct GET");
        auto head = client.Head("/x");
        ASSERT_TRUE(head);
        EXPECT_EQ(head->status, 200);
        auto declined = client.Get("/declined");
        ASSERT_TRUE(declined);
        EXPECT_EQ(declined->body, "routed");
        auto put = client.Put("/x", "payload", "text/plain");
        ASSERT_TRUE(put);
        EXPECT_EQ(put->body, "routed put payload");
    }
    listener.stop();
}

}  // namespace
}  // namespace bai::http
