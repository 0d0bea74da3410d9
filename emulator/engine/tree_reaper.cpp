#include "emulator/engine/tree_reaper.h"

#include <system_error>

#include "emulator/engine/cpu_affinity.h"
#include "emulator/engine/writable_root.h"
#include "fuse_mounts/manager/mount_table.h"

namespace bai::engine {

namespace fs = std::filesystem;

TreeReaper::~TreeReaper() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    work_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void TreeReaper::remove(const fs::path& path) {
    std::error_code ec;
    // What is mounted in it is released where it is (a mount point that moved would be
    // another's to find).
    if (!mounts::release_mounts_under(path).empty()) return;
    fs::path grave;
    {
        std::lock_guard lock(mutex_);
        grave = graveyard_ / std::to_string(next_++);
    }
    fs::create_directories(graveyard_, ec);
    fs::rename(path, grave, ec);
    if (ec) {
        if (fs::exists(path, ec)) remove_tree(path, ec);
        return;
    }
    std::lock_guard lock(mutex_);
    if (!thread_.joinable()) {
        try {
            thread_ = std::thread([this] { run(); });
        } catch (const std::system_error&) {  // no thread to be had: removed here and now
            remove_tree(grave, ec);
            return;
        }
    }
    queue_.push_back(std::move(grave));
    work_.notify_one();
}

void TreeReaper::drain() {
    std::unique_lock lock(mutex_);
    idle_.wait(lock, [this] { return queue_.empty() && !busy_; });
}

void TreeReaper::run() {
    // The removal takes no turn of a virtual clock: in a replay it runs beside the turns.
    run_beside_turns();
    std::unique_lock lock(mutex_);
    while (true) {
        work_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stopping, nothing left
        const fs::path grave = std::move(queue_.front());
        queue_.pop_front();
        busy_ = true;
        lock.unlock();
        std::error_code ec;
        fs::remove_all(grave, ec);
        lock.lock();
        busy_ = false;
        if (queue_.empty()) idle_.notify_all();
    }
}

}  // namespace bai::engine
