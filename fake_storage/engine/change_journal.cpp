#include "fake_storage/engine/change_journal.h"

#include <algorithm>

#include "common/crypto/random_id.h"

namespace bai::storage {

ChangeJournal::ChangeJournal(StoreChanges& changes, std::size_t capacity)
    : changes_(changes), capacity_(std::max<std::size_t>(capacity, 1)), epoch_(crypto::random_hex(8)) {
    subscription_ = changes_.subscribe([this](const StoreChange& change) { record(change); });
}

ChangeJournal::~ChangeJournal() {
    changes_.unsubscribe(subscription_);
    close();
}

void ChangeJournal::record(const StoreChange& change) {
    {
        std::lock_guard guard(mutex_);
        kept_.push_back({++last_, change.account, change.volume, change.path});
        if (kept_.size() > capacity_) kept_.pop_front();
    }
    changed_.notify_all();
}

void ChangeJournal::close() {
    {
        std::lock_guard guard(mutex_);
        closed_ = true;
    }
    changed_.notify_all();
}

bool ChangeJournal::collect(const std::string& account, const std::string& volume, std::uint64_t since,
                            Read& read) const {
    read.next = last_;
    // The first change after `since` is no longer kept (or `since` is of the future: another run).
    const std::uint64_t oldest = kept_.empty() ? last_ + 1 : kept_.front().number;
    if (since > last_ || since + 1 < oldest) {
        read.everything = true;
        return true;
    }
    auto first = std::lower_bound(kept_.begin(), kept_.end(), since + 1,
                                  [](const Change& c, std::uint64_t n) { return c.number < n; });
    for (auto it = first; it != kept_.end(); ++it) {
        if (it->account != account || it->volume != volume) continue;
        if (std::find(read.paths.begin(), read.paths.end(), it->path) == read.paths.end()) read.paths.push_back(it->path);
    }
    return !read.paths.empty();
}

ChangeJournal::Read ChangeJournal::read(const std::string& account, const std::string& volume,
                                        const std::string& epoch, std::optional<std::uint64_t> since,
                                        std::chrono::milliseconds wait) {
    Read read;
    read.epoch = epoch_;
    std::unique_lock lock(mutex_);
    if (!since) {
        read.next = last_;
        return read;
    }
    if (epoch != epoch_) {
        read.next = last_;
        read.everything = true;
        return read;
    }
    const auto deadline = std::chrono::steady_clock::now() + wait;
    while (!collect(account, volume, *since, read) && !closed_) {
        if (changed_.wait_until(lock, deadline) == std::cv_status::timeout) {
            collect(account, volume, *since, read);
            break;
        }
    }
    return read;
}

}  // namespace bai::storage
