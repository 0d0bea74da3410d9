#include "emulator/engine/slurm_sizes.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace bai::engine {
namespace {

// A count of the map: a whole number from `least` to `most`.
int count(const nlohmann::json& value, const std::string& where, int least, int most) {
    if (!value.is_number_integer() || value.get<long long>() < least || value.get<long long>() > most) {
        throw std::invalid_argument(where + " must be a whole number from " + std::to_string(least) + " to " +
                                    std::to_string(most) + ", not " + value.dump());
    }
    return static_cast<int>(value.get<long long>());
}

}  // namespace

SizeMap parse_size_map(std::string_view json_text) {
    const nlohmann::json doc = nlohmann::json::parse(json_text, nullptr, false);
    if (doc.is_discarded()) throw std::invalid_argument("the size map is not valid JSON");
    if (!doc.is_object()) throw std::invalid_argument("the size map must be a JSON object of vmSizes");
    SizeMap map;
    for (const auto& [key, fields] : doc.items()) {
        std::optional<validation::VmSize> size = validation::find_vm_size(key);
        if (!size) throw std::invalid_argument("the size map names an unknown vmSize '" + key + "'");
        if (!fields.is_object()) throw std::invalid_argument("the size map's " + key + " must be an object");
        SizeOverride o;
        for (const auto& [field, value] : fields.items()) {
            const std::string where = "the size map's " + key + "." + field;
            if (field == "cores") {
                o.cores = count(value, where, 1, 4096);
            } else if (field == "memoryMiB") {
                o.memory_mib = count(value, where, 0, 64 * 1024 * 1024);
            } else if (field == "gpus") {
                o.gpus = count(value, where, 0, 64);
            } else {
                throw std::invalid_argument(where + " is not a field of a size (cores, memoryMiB, gpus)");
            }
        }
        const std::string name(size->name);
        if (map.count(name)) throw std::invalid_argument("the size map names " + name + " twice ('" + key + "')");
        map[name] = o;
    }
    return map;
}

HostSize host_size(const SizeMap& map, const validation::VmSize& vm_size) {
    HostSize size{std::max(1, vm_size.cores), static_cast<int>(std::lround(vm_size.memory_gib * 1024)), vm_size.gpus};
    auto it = map.find(vm_size.name);
    if (it == map.end()) return size;
    size.cores = it->second.cores.value_or(size.cores);
    size.memory_mib = it->second.memory_mib.value_or(size.memory_mib);
    size.gpus = it->second.gpus.value_or(size.gpus);
    return size;
}

}  // namespace bai::engine
