#include "fuse_mounts/share/mount_faults.h"

#include <cerrno>
#include <thread>

namespace bai::mounts {

void MountFaults::set(const std::string& account, const std::string& share, const FaultPlan& plan) {
    std::lock_guard guard(mutex_);
    plans_[{account, share}] = plan;
}

void MountFaults::clear(const std::string& account, const std::string& share) {
    std::lock_guard guard(mutex_);
    plans_.erase({account, share});
}

std::optional<FaultPlan> MountFaults::get(const std::string& account, const std::string& share) {
    std::lock_guard guard(mutex_);
    auto it = plans_.find({account, share});
    if (it == plans_.end()) return std::nullopt;
    return it->second;
}

int MountFaults::next(const std::string& account, const std::string& share) {
    FaultPlan hit;
    {
        std::lock_guard guard(mutex_);
        auto it = plans_.find({account, share});
        if (it == plans_.end()) return 0;
        hit = it->second;
        if (--it->second.operations <= 0) plans_.erase(it);
    }
    if (hit.stall.count() > 0) std::this_thread::sleep_for(hit.stall);
    return hit.error;
}

int fault_errno(const std::string& name) {
    if (name == "EIO") return EIO;
    if (name == "ENOSPC") return ENOSPC;
    return 0;
}

}  // namespace bai::mounts
