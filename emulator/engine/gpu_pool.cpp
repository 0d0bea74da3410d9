#include "emulator/engine/gpu_pool.h"

namespace bai::engine {

GpuPool::GpuPool(std::vector<Gpu> gpus) : gpus_(std::move(gpus)) {
    for (const Gpu& gpu : gpus_) free_.push_back(gpu.uuid);
}

std::vector<std::string> GpuPool::take(int count) {
    std::lock_guard guard(mutex_);
    std::vector<std::string> taken;
    while (static_cast<int>(taken.size()) < count && !free_.empty()) {
        taken.push_back(free_.front());
        free_.erase(free_.begin());
    }
    return taken;
}

void GpuPool::give_back(std::vector<std::string>& uuids) {
    std::lock_guard guard(mutex_);
    for (std::string& uuid : uuids) free_.push_back(std::move(uuid));
    uuids.clear();
}

size_t GpuPool::free_count() const {
    std::lock_guard guard(mutex_);
    return free_.size();
}

std::optional<Gpu> GpuPool::find(const std::string& uuid) const {
    for (const Gpu& gpu : gpus_) {
        if (gpu.uuid == uuid) return gpu;
    }
    return std::nullopt;
}

}  // namespace bai::engine
