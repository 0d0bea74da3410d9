// Changes a store publishes, sent to one mount's kernel as cache invalidations (entries,
// attributes, pages) on a thread of their own. A change made by another mount is queued: its
// thread may be serving a request whose process holds a lock that the kernel needs for the
// invalidation. A change made through REST or the engine waits until it is sent (up to 5 s), so
// that the next access through this mount sees it. The mount's own changes are not sent: the
// kernel learnt of them from the replies; queue() sends what a reply cannot tell.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "fake_storage/engine/store_changes.h"

namespace bai::mounts {

class ChangeNotifier {
public:
    // `itself` false: only the path's ancestors may have changed (see queue()).
    using Invalidate = std::function<void(const std::string& path, bool itself)>;

    ChangeNotifier() = default;
    ~ChangeNotifier() { stop(); }
    ChangeNotifier(const ChangeNotifier&) = delete;
    ChangeNotifier& operator=(const ChangeNotifier&) = delete;

    // Sends `invalidate` the changes of `account`'s `volume` published by `changes`, except those
    // made by `self` (the mount).
    void start(storage::StoreChanges& changes, std::string account, std::string volume, const void* self,
               Invalidate invalidate);
    // Unsubscribes, drops what is still queued and ends the thread. Call it while the session the
    // invalidations use is still there (after its connection is aborted, they fail at once).
    void stop();
    // Queues an invalidation without waiting: what the mount's own change did that its reply did
    // not tell the kernel (a deletion can take its virtual parent directory with it).
    void queue(const std::string& path, bool itself);

private:
    void on_change(const storage::StoreChange& change);
    void run();

    storage::StoreChanges* changes_ = nullptr;
    std::uint64_t subscription_ = 0;
    std::string account_;
    std::string volume_;
    const void* self_ = nullptr;
    Invalidate invalidate_;
    std::thread thread_;
    std::mutex mutex_;
    std::condition_variable changed_;
    struct Pending {
        std::uint64_t seq;
        std::string path;
        bool itself;
    };
    std::deque<Pending> queue_;
    std::uint64_t queued_ = 0;  // sequence numbers
    std::uint64_t sent_ = 0;
    bool stopping_ = true;
};

}  // namespace bai::mounts
