// The machine's GPUs that no emulated node holds, shared by the Batch AI clusters' nodes and the
// Batch pools' nodes: a GPU belongs to one node at a time, as it would to one VM. Thread-safe.
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "emulator/engine/gpu_inventory.h"

namespace bai::engine {

class GpuPool {
public:
    explicit GpuPool(std::vector<Gpu> gpus);
    // Up to `count` free GPUs (their UUIDs), in the machine's order.
    std::vector<std::string> take(int count);
    void give_back(std::vector<std::string>& uuids);
    size_t free_count() const;
    // What the machine says of a GPU it has.
    std::optional<Gpu> find(const std::string& uuid) const;

private:
    const std::vector<Gpu> gpus_;
    mutable std::mutex mutex_;
    std::vector<std::string> free_;
};

}  // namespace bai::engine
