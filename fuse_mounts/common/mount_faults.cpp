#include "fuse_mounts/common/mount_faults.h"

#include <cerrno>
#include <thread>

namespace bai::mounts {

void MountFaults::set(VolumeKind kind, const std::string& account, const std::string& name, const FaultPlan& plan) {
    std::lock_guard guard(mutex_);
    plans_[{kind, account, name}] = plan;
}

void MountFaults::clear(VolumeKind kind, const std::string& account, const std::string& name) {
    std::lock_guard guard(mutex_);
    plans_.erase({kind, account, name});
}

std::optional<FaultPlan> MountFaults::get(VolumeKind kind, const std::string& account, const std::string& name) {
    std::lock_guard guard(mutex_);
    auto it = plans_.find({kind, account, name});
    if (it == plans_.end()) return std::nullopt;
    return it->second;
}

void MountFaults::set_fallback(std::function<int(VolumeKind)> fallback) {
    std::lock_guard guard(mutex_);
    fallback_ = std::move(fallback);
}

int MountFaults::next(VolumeKind kind, const std::string& account, const std::string& name) {
    FaultPlan hit;
    std::function<int(VolumeKind)> fallback;
    {
        std::lock_guard guard(mutex_);
        auto it = plans_.find({kind, account, name});
        if (it == plans_.end()) {
            fallback = fallback_;
        } else {
            hit = it->second;
            if (--it->second.operations <= 0) plans_.erase(it);
        }
    }
    if (fallback) return fallback(kind);
    if (hit.stall.count() > 0) std::this_thread::sleep_for(hit.stall);
    return hit.error;
}

int fault_errno(const std::string& name) {
    if (name == "EIO") return EIO;
    if (name == "ENOSPC") return ENOSPC;
    return 0;
}

}  // namespace bai::mounts
