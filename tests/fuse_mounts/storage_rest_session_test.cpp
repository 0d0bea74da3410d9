// The REST session of bai-blobfuse and bai-sharefuse: its change feed's follower ends with it.
#include "fuse_mounts/common/storage_rest_session.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <chrono>
#include <future>
#include <mutex>
#include <thread>

namespace bai::mounts {
namespace {

// A change feed that answers the first request (no `since`) at once and holds every long poll
// until the round is over: a follower is stopped only by its session's destruction.
class HeldFeed {
public:
    HeldFeed() {
        server_.Get(R"(/.*)", [this](const httplib::Request& req, httplib::Response& res) {
            if (req.has_param("since")) {
                std::unique_lock lock(mutex_);
                const int held_in = round_;
                released_cv_.wait(lock, [&] { return released_ || round_ != held_in; });
            }
            res.set_content(R"({"next": 1, "epoch": "e", "paths": ["a"]})", "application/json");
        });
        port_ = server_.bind_to_any_port("127.0.0.1");
        thread_ = std::thread([this] { server_.listen_after_bind(); });
    }
    ~HeldFeed() {
        {
            std::lock_guard guard(mutex_);
            released_ = true;
        }
        released_cv_.notify_all();
        server_.stop();
        thread_.join();
    }
    int port() const { return port_; }
    // The polls held so far are answered (a test's round is over: their clients are gone).
    void next_round() {
        {
            std::lock_guard guard(mutex_);
            ++round_;
        }
        released_cv_.notify_all();
    }

private:
    httplib::Server server_;
    int port_ = 0;
    std::thread thread_;
    std::mutex mutex_;
    std::condition_variable released_cv_;
    bool released_ = false;
    int round_ = 0;
};

TEST(StorageRestSession, DestroyedAtAnyMomentItsFollowerEndsAtOnce) {
    HeldFeed feed;
    StorageRestSettings settings;
    settings.endpoint = "http://127.0.0.1:" + std::to_string(feed.port()) + "/devstoreaccount1";
    settings.account = "devstoreaccount1";
    settings.container = "data";
    settings.sas = "sv=2020-08-04&sig=x";
    storage::StoreChanges changes;
    // The session is destroyed from another thread started as the follower publishes its first
    // answer's change: the destruction lands while the follower goes on to its long poll, at any
    // point of it, before its socket is open too. The feed never answers the poll, so only the
    // destruction can end it (the client's own read timeout, 50 s, is beyond the watchdog).
    for (int round = 0; round < 100; ++round) {
        std::unique_ptr<StorageRestSession> session =
            std::make_unique<StorageRestSession>(settings, StorageRestKeys{"blobEndpoint", "containerName", "blob"});
        std::mutex mutex;
        std::condition_variable changed;
        bool followed = false;  // follow() has returned: the session may go
        std::future<void> destroyed;
        const std::uint64_t id = changes.subscribe([&](const storage::StoreChange&) {
            std::unique_lock lock(mutex);
            changed.wait(lock, [&] { return followed; });
            if (destroyed.valid()) return;
            destroyed = std::async(std::launch::async, [&session] { session.reset(); });
            changed.notify_all();
        });
        struct Unsubscribe {
            storage::StoreChanges& changes;
            std::uint64_t id;
            ~Unsubscribe() { changes.unsubscribe(id); }
        } unsubscribe{changes, id};
        session->follow("container", changes);
        {
            std::unique_lock lock(mutex);
            followed = true;
            changed.notify_all();
            ASSERT_TRUE(changed.wait_for(lock, std::chrono::seconds(10), [&] { return destroyed.valid(); })) << "round " << round;
        }
        // (10 s is only the watchdog of a hang.)
        ASSERT_EQ(destroyed.wait_for(std::chrono::seconds(10)), std::future_status::ready) << "round " << round;
        feed.next_round();
    }
}

}  // namespace
}  // namespace bai::mounts
