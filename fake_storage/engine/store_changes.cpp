#include "fake_storage/engine/store_changes.h"

#include <vector>

namespace bai::storage {

namespace {
thread_local const void* thread_origin = nullptr;
}  // namespace

StoreChanges::OriginScope::OriginScope(const void* origin) : previous_(thread_origin) { thread_origin = origin; }

StoreChanges::OriginScope::~OriginScope() { thread_origin = previous_; }

std::uint64_t StoreChanges::subscribe(Listener listener) {
    std::lock_guard guard(mutex_);
    const std::uint64_t id = next_++;
    listeners_.emplace(id, std::make_shared<Listener>(std::move(listener)));
    return id;
}

void StoreChanges::unsubscribe(std::uint64_t id) {
    std::unique_lock lock(mutex_);
    auto it = listeners_.find(id);
    if (it == listeners_.end()) return;
    std::shared_ptr<Listener> mine = it->second;
    listeners_.erase(it);
    // Publishers hold their copies until their calls end (and drop them under the mutex).
    idle_.wait(lock, [&mine] { return mine.use_count() == 1; });
}

void StoreChanges::publish(const std::string& account, const std::string& volume, const std::string& path,
                           const void* origin) const {
    std::vector<std::shared_ptr<Listener>> listeners;
    {
        std::lock_guard guard(mutex_);
        if (listeners_.empty()) return;
        for (const auto& [id, listener] : listeners_) listeners.push_back(listener);
    }
    const StoreChange change{account, volume, path, origin ? origin : thread_origin};
    for (const auto& listener : listeners) (*listener)(change);
    std::lock_guard guard(mutex_);
    listeners.clear();
    idle_.notify_all();
}

}  // namespace bai::storage
