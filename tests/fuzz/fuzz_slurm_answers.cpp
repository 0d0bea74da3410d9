// libFuzzer: what the emulator reads from Slurm and from the site (slurm.md): sbatch's, squeue's,
// scontrol's and nvidia-smi's output, and the --slurm-size-map file. The first byte picks the
// reader; the rest is its input. A reader may refuse (std::invalid_argument), never crash, and
// what it accepts keeps its promises.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "emulator/engine/slurm_commands.h"
#include "emulator/engine/slurm_gpus.h"
#include "emulator/engine/slurm_sizes.h"

using namespace bai::engine;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
    SlurmSettings settings;
    settings.instance = "bai0123abcd";
    try {
        switch (data[0] % 7) {
            case 0:
                if (auto job = parse_sbatch_answer(input)) {
                    if (job->empty() || !std::all_of(job->begin(), job->end(), [](char c) { return c >= '0' && c <= '9'; })) {
                        __builtin_trap();
                    }
                }
                break;
            case 1:
                for (const HolderState& h : parse_squeue(settings, input)) {
                    if (h.node_id.empty()) __builtin_trap();
                    (void)fate_of(h.state);
                    (void)holder_loss_text(h);
                }
                break;
            case 2:
                if (auto address = parse_node_address(input); address && address->empty()) __builtin_trap();
                (void)parse_node_unresponsive(input);
                break;
            case 3:
                for (const std::string& step : parse_steps("42", input)) {
                    if (step.empty()) __builtin_trap();
                }
                break;
            case 4: {
                const std::vector<int> indexes = parse_gres_indexes(input);
                if (!std::is_sorted(indexes.begin(), indexes.end()) ||
                    std::adjacent_find(indexes.begin(), indexes.end()) != indexes.end() || indexes.size() > 4096) {
                    __builtin_trap();
                }
                break;
            }
            case 5: {
                const std::vector<Gpu> gpus = parse_gpu_query(input);
                for (const Gpu& g : gpus) {
                    if (g.uuid.rfind("GPU-", 0) != 0 || g.index < 0) __builtin_trap();
                }
                try {
                    (void)allocated_gpus(gpus, {0, 1}, 2);
                } catch (const std::runtime_error&) {
                }
                break;
            }
            default:
                for (const auto& [name, o] : parse_size_map(input)) {
                    if (name.rfind("Standard_", 0) != 0) __builtin_trap();
                    if ((o.cores && *o.cores < 1) || (o.memory_mib && *o.memory_mib < 0) || (o.gpus && *o.gpus < 0)) {
                        __builtin_trap();
                    }
                }
        }
    } catch (const std::invalid_argument&) {
    }
    return 0;
}
