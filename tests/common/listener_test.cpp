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

}  // namespace
}  // namespace bai::http
