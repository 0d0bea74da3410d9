// Who changed what in a file share: the File REST API, the job engine, or one of the share's
// mounts. The mounts subscribe to learn of changes made elsewhere (so that the kernel's caches of
// the other mounts can be invalidated); FileStore publishes each change it makes or indexes.
#pragma once

#include <cstdint>
#include <functional>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace bai::storage {

struct ShareChange {
    const std::string& account;
    const std::string& share;
    const std::string& path;  // relative to the share, as spelled on disk ("" for its root)
    const void* origin;       // the mount that made the change; null for REST and the engine
};

class ShareChanges {
public:
    using Listener = std::function<void(const ShareChange&)>;
    // Returns the subscription's id. Listeners are called on the thread that made the change,
    // after it is done (no lock of the store held): they must not block on the store.
    std::uint64_t subscribe(Listener listener);
    // Once it returns, the listener is not called again (calls in progress have ended).
    void unsubscribe(std::uint64_t id);
    void publish(const std::string& account, const std::string& share, const std::string& path,
                 const void* origin = nullptr) const;

private:
    mutable std::mutex mutex_;
    std::map<std::uint64_t, std::shared_ptr<Listener>> listeners_;
    std::uint64_t next_ = 1;
    mutable std::condition_variable idle_;
};

}  // namespace bai::storage
