#include "fuse_mounts/common/change_notifier.h"

#include <chrono>

namespace bai::mounts {

void ChangeNotifier::start(storage::StoreChanges& changes, std::string account, std::string volume, const void* self,
                           Invalidate invalidate) {
    stop();
    account_ = std::move(account);
    volume_ = std::move(volume);
    self_ = self;
    invalidate_ = std::move(invalidate);
    {
        std::lock_guard lock(mutex_);
        stopping_ = false;
    }
    thread_ = std::thread([this] { run(); });
    changes_ = &changes;
    subscription_ = changes.subscribe([this](const storage::StoreChange& c) { on_change(c); });
}

void ChangeNotifier::stop() {
    if (changes_ && subscription_) changes_->unsubscribe(subscription_);
    subscription_ = 0;
    changes_ = nullptr;
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
        queue_.clear();
        changed_.notify_all();
    }
    if (thread_.joinable()) thread_.join();
}

void ChangeNotifier::queue(const std::string& path, bool itself) {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    queue_.push_back({++queued_, path, itself});
    changed_.notify_all();
}

void ChangeNotifier::on_change(const storage::StoreChange& change) {
    if (change.origin == self_ || change.account != account_ || change.volume != volume_) return;
    std::unique_lock lock(mutex_);
    if (stopping_) return;
    const std::uint64_t seq = ++queued_;
    queue_.push_back({seq, change.path, true});
    changed_.notify_all();
    if (change.origin == nullptr) {
        changed_.wait_for(lock, std::chrono::seconds(5), [this, seq] { return sent_ >= seq || stopping_; });
    }
}

void ChangeNotifier::run() {
    std::unique_lock lock(mutex_);
    while (true) {
        changed_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;
        Pending next = std::move(queue_.front());
        queue_.pop_front();
        lock.unlock();
        try {
            invalidate_(next.path, next.itself);
        } catch (...) {  // (the store could not be read: the kernel's caches time out instead)
        }
        lock.lock();
        sent_ = next.seq;
        changed_.notify_all();
    }
}

}  // namespace bai::mounts
