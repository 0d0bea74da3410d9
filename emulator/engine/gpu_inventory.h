// The GPUs that emulated nodes are given: the machine's, read through NVML loaded at run time
// (no build or package dependency on a driver), a fake inventory for machines without GPUs (CI),
// or none. Chosen by the daemon's --gpus flag.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bai::engine {

struct Gpu {
    int index = 0;          // the machine's order (NVML's, which is PCI bus order)
    std::string uuid;       // "GPU-8e3c...": what CUDA_VISIBLE_DEVICES and docker --gpus accept
    std::string name;       // "NVIDIA H100 80GB HBM3", "Fake GPU"
    std::uint64_t memory_bytes = 0;
    bool fake = false;
    int minor = -1;         // N of its device node /dev/nvidiaN; -1 for fake GPUs
};

struct GpuSource {
    enum class Kind { automatic, none, fake };
    Kind kind = Kind::automatic;
    int fake_count = 0;
};

// "auto" (NVML when a driver answers, else none), "none", "fake:N" (N from 0 to 64).
// Throws std::invalid_argument naming the value otherwise.
GpuSource parse_gpu_source(std::string_view text);

struct GpuInventory {
    std::vector<Gpu> gpus;
    std::string description;  // one line for the log: "2 GPUs from NVML", "none: <why>"
};

GpuInventory discover_gpus(const GpuSource& source);
// The machine's GPUs through NVML (libnvidia-ml.so.1); empty with `why` set when there is none.
std::vector<Gpu> nvml_gpus(std::string& why);
// N fake GPUs with stable UUIDs (the same N gives the same UUIDs on every run).
std::vector<Gpu> fake_gpus(int count);

}  // namespace bai::engine
