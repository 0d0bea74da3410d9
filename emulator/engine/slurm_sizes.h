// How big a node's holder job is (slurm.md, "Sizes"): the vmSize's cores, memory and GPUs, or
// what the site's size map says for it (`--slurm-size-map FILE`): a cluster's real hosts rarely
// match Azure's machines.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "emulator/validation/vm_sizes.h"

namespace bai::engine {

// What one vmSize asks of Slurm; a field left out of the map is the vmSize's own.
struct SizeOverride {
    std::optional<int> cores;
    std::optional<int> memory_mib;  // 0: not asked (the partition's default memory)
    std::optional<int> gpus;
};
// By the vmSize's name as the table writes it ("Standard_NC6").
using SizeMap = std::map<std::string, SizeOverride, std::less<>>;

// The map file: {"Standard_NC6": {"cores": 8, "memoryMiB": 64000, "gpus": 1}, ...}; a key in any
// case, with or without "Standard_". Throws std::invalid_argument naming the key and the field
// (an unknown vmSize, an unknown field, a count that is not a whole number in range).
SizeMap parse_size_map(std::string_view json_text);

struct HostSize {
    int cores = 1;
    int memory_mib = 0;  // 0: not asked
    int gpus = 0;
};
// The holder's size for `vm_size`: the vmSize's cores, memory (GiB as MiB) and GPUs, each
// replaced by the map's where it has one.
HostSize host_size(const SizeMap& map, const validation::VmSize& vm_size);

}  // namespace bai::engine
