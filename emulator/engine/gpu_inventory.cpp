#include "emulator/engine/gpu_inventory.h"

#include <dlfcn.h>

#include <cstdio>
#include <stdexcept>

namespace bai::engine {
namespace {

// The few NVML entry points used, with the C signatures of nvml.h (stable since NVML 5).
using NvmlReturn = int;  // 0 is NVML_SUCCESS
using NvmlDevice = void*;
struct NvmlMemory {
    unsigned long long total, free, used;
};
using InitFn = NvmlReturn (*)();
using ShutdownFn = NvmlReturn (*)();
using CountFn = NvmlReturn (*)(unsigned int*);
using HandleFn = NvmlReturn (*)(unsigned int, NvmlDevice*);
using StringFn = NvmlReturn (*)(NvmlDevice, char*, unsigned int);
using MemoryFn = NvmlReturn (*)(NvmlDevice, NvmlMemory*);
using MinorFn = NvmlReturn (*)(NvmlDevice, unsigned int*);

template <typename F>
F symbol(void* library, const char* name) {
    return reinterpret_cast<F>(dlsym(library, name));
}

struct Library {
    void* handle = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    ~Library() {
        if (handle != nullptr) dlclose(handle);
    }
};

}  // namespace

GpuSource parse_gpu_source(std::string_view text) {
    if (text == "auto") return {};
    if (text == "none") return {GpuSource::Kind::none, 0};
    if (text.substr(0, 5) == "fake:") {
        std::string digits(text.substr(5));
        if (!digits.empty() && digits.size() <= 2 && digits.find_first_not_of("0123456789") == std::string::npos) {
            int n = std::stoi(digits);
            if (n <= 64) return {GpuSource::Kind::fake, n};
        }
    }
    throw std::invalid_argument("--gpus must be auto, none or fake:N (N from 0 to 64), got '" + std::string(text) +
                                "'");
}

std::vector<Gpu> fake_gpus(int count) {
    std::vector<Gpu> gpus;
    for (int i = 0; i < count; ++i) {
        char uuid[64];
        std::snprintf(uuid, sizeof uuid, "GPU-fa4e0000-0000-4000-8000-%012d", i);
        gpus.push_back({i, uuid, "Fake GPU", 16ULL << 30, true});
    }
    return gpus;
}

std::vector<Gpu> nvml_gpus(std::string& why) {
    Library nvml;
    if (nvml.handle == nullptr) {
        why = "libnvidia-ml.so.1 not found (no NVIDIA driver)";
        return {};
    }
    auto init = symbol<InitFn>(nvml.handle, "nvmlInit_v2");
    auto shutdown = symbol<ShutdownFn>(nvml.handle, "nvmlShutdown");
    auto count_of = symbol<CountFn>(nvml.handle, "nvmlDeviceGetCount_v2");
    auto handle_of = symbol<HandleFn>(nvml.handle, "nvmlDeviceGetHandleByIndex_v2");
    auto uuid_of = symbol<StringFn>(nvml.handle, "nvmlDeviceGetUUID");
    auto name_of = symbol<StringFn>(nvml.handle, "nvmlDeviceGetName");
    auto memory_of = symbol<MemoryFn>(nvml.handle, "nvmlDeviceGetMemoryInfo");
    auto minor_of = symbol<MinorFn>(nvml.handle, "nvmlDeviceGetMinorNumber");
    if (!init || !shutdown || !count_of || !handle_of || !uuid_of || !name_of || !memory_of || !minor_of) {
        why = "libnvidia-ml.so.1 lacks the NVML functions used";
        return {};
    }
    if (NvmlReturn rc = init(); rc != 0) {
        why = "nvmlInit failed with NVML error " + std::to_string(rc);
        return {};
    }
    std::vector<Gpu> gpus;
    unsigned int count = 0;
    if (count_of(&count) != 0) why = "nvmlDeviceGetCount failed";
    for (unsigned int i = 0; i < count; ++i) {
        NvmlDevice device = nullptr;
        char uuid[96] = {};
        char name[96] = {};
        NvmlMemory memory{};
        if (handle_of(i, &device) != 0 || uuid_of(device, uuid, sizeof uuid) != 0) continue;
        name_of(device, name, sizeof name);
        memory_of(device, &memory);
        unsigned int minor = 0;
        bool has_minor = minor_of(device, &minor) == 0;
        gpus.push_back({static_cast<int>(i), uuid, name, memory.total, false, has_minor ? static_cast<int>(minor) : -1});
    }
    if (gpus.empty() && why.empty()) why = "NVML reports no GPU";
    shutdown();
    return gpus;
}

GpuInventory discover_gpus(const GpuSource& source) {
    GpuInventory inventory;
    switch (source.kind) {
        case GpuSource::Kind::none:
            inventory.description = "none (--gpus none)";
            break;
        case GpuSource::Kind::fake:
            inventory.gpus = fake_gpus(source.fake_count);
            inventory.description = std::to_string(source.fake_count) + " fake GPUs (--gpus fake:N)";
            break;
        case GpuSource::Kind::automatic: {
            std::string why;
            inventory.gpus = nvml_gpus(why);
            inventory.description = inventory.gpus.empty() ? "none: " + why
                                                           : std::to_string(inventory.gpus.size()) + " GPUs from NVML";
            break;
        }
    }
    return inventory;
}

}  // namespace bai::engine
