// Who changed what in a file share or a blob container: the REST APIs, the job engine, or one of
// its mounts. The mounts subscribe to learn of changes made elsewhere (so that the kernel's caches
// of the other mounts can be invalidated); FileStore and BlobStore publish each change they make
// (FileStore also each one it indexes from the disk).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace bai::storage {

struct StoreChange {
    const std::string& account;
    const std::string& volume;  // the share or the container
    const std::string& path;    // in it: a share's path as spelled on disk, a blob's name; "" for all of it
    const void* origin;         // the mount that made the change; null for REST and the engine
};

class StoreChanges {
public:
    using Listener = std::function<void(const StoreChange&)>;
    // Returns the subscription's id. Listeners are called on the thread that made the change,
    // after it is done (no lock of the store held): they must not block on the store.
    std::uint64_t subscribe(Listener listener);
    // Once it returns, the listener is not called again (calls in progress have ended).
    void unsubscribe(std::uint64_t id);
    // `origin` null: the thread's (OriginScope), if any.
    void publish(const std::string& account, const std::string& volume, const std::string& path,
                 const void* origin = nullptr) const;

    // While one lives, what its thread changes is published as made by `origin` (a mount's
    // request handlers, whose calls into the store do not pass it along).
    class OriginScope {
    public:
        explicit OriginScope(const void* origin);
        ~OriginScope();
        OriginScope(const OriginScope&) = delete;
        OriginScope& operator=(const OriginScope&) = delete;

    private:
        const void* previous_;
    };

private:
    mutable std::mutex mutex_;
    std::map<std::uint64_t, std::shared_ptr<Listener>> listeners_;
    std::uint64_t next_ = 1;
    mutable std::condition_variable idle_;
};

}  // namespace bai::storage
