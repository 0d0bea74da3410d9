#include "emulator/engine/slurm_gpus.h"

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include "common/text/ascii.h"

namespace bai::engine {
namespace {

int number(std::string_view text, const std::string& what) {
    text = text::trim(text);
    int value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || value < 0) {
        throw std::invalid_argument(what + ": '" + std::string(text) + "' is not a number");
    }
    return value;
}

// "0-1,3" -> 0, 1, 3 (at most 1024 indexes: no host has more GPUs).
void add_ranges(std::string_view list, std::vector<int>& out) {
    while (!list.empty()) {
        const size_t comma = list.find(',');
        const std::string_view part = list.substr(0, comma);
        const size_t dash = part.find('-');
        const int first = number(part.substr(0, dash), "a GPU index");
        const int last = dash == std::string_view::npos ? first : number(part.substr(dash + 1), "a GPU index");
        if (last < first || last - first > 1024 || out.size() > 1024) {
            throw std::invalid_argument("a GPU index range '" + std::string(part) + "' is not one");
        }
        for (int i = first; i <= last; ++i) out.push_back(i);
        if (comma == std::string_view::npos) break;
        list.remove_prefix(comma + 1);
    }
}

}  // namespace

std::vector<std::string> scontrol_job_argv(const std::string& job) { return {"scontrol", "show", "job", "-d", job}; }

std::vector<int> parse_gres_indexes(std::string_view detail) {
    // Each node's line: "Nodes=host1 CPU_IDs=0-1 Mem=500 GRES=gpu:2(IDX:0-1)", or with a type
    // ("gpu:a100:2(IDX:0,2)"), beside other resources ("gpu:1(IDX:3),mps:0(...)").
    std::vector<int> out;
    for (size_t at = detail.find("GRES="); at != std::string_view::npos; at = detail.find("GRES=", at + 1)) {
        std::string_view rest = detail.substr(at + 5);
        rest = rest.substr(0, rest.find_first_of(" \n"));
        for (size_t gpu = rest.find("gpu"); gpu != std::string_view::npos; gpu = rest.find("gpu", gpu + 1)) {
            if (gpu > 0 && rest[gpu - 1] != ',') continue;
            const size_t open = rest.find("(IDX:", gpu);
            const size_t close = rest.find(')', open);
            if (open == std::string_view::npos || close == std::string_view::npos) continue;
            add_ranges(rest.substr(open + 5, close - open - 5), out);
        }
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

std::vector<std::string> gpu_query_argv() {
    return {"/bin/sh", "-c",
            "nvidia-smi --query-gpu=index,uuid,name,memory.total --format=csv,noheader,nounits || exit; "
            "for f in /proc/driver/nvidia/gpus/*/information; do [ -r \"$f\" ] || continue; echo \"$1\"; cat \"$f\"; done; "
            "exit 0",
            "bai-gpus", std::string(kGpuInformation)};
}

std::vector<Gpu> parse_gpu_query(std::string_view output) {
    const size_t first = output.find(kGpuInformation);
    std::vector<Gpu> gpus = parse_nvidia_smi(output.substr(0, first));
    if (first == std::string_view::npos) return gpus;
    // "GPU UUID: \t GPU-8c17..." and "Device Minor: \t 0" in each GPU's block.
    std::string_view rest = output.substr(first);
    while (!rest.empty()) {
        rest.remove_prefix(std::min(rest.size(), kGpuInformation.size()));
        const size_t next = rest.find(kGpuInformation);
        const std::string_view block = rest.substr(0, next);
        rest = next == std::string_view::npos ? std::string_view() : rest.substr(next);
        std::string uuid;
        int minor = -1;
        for (size_t at = 0; at < block.size();) {
            const size_t end = std::min(block.find('\n', at), block.size());
            const std::string_view line = block.substr(at, end - at);
            at = end + 1;
            const size_t colon = line.find(':');
            if (colon == std::string_view::npos) continue;
            const std::string_view key = text::trim(line.substr(0, colon));
            const std::string_view value = text::trim(line.substr(colon + 1));
            if (key == "GPU UUID") uuid = std::string(value);
            if (key == "Device Minor") {
                int n = -1;
                auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
                if (ec == std::errc() && p == value.data() + value.size() && n >= 0 && n < 1 << 20) minor = n;
            }
        }
        for (Gpu& gpu : gpus) {
            if (!uuid.empty() && gpu.uuid == uuid) gpu.minor = minor;
        }
    }
    return gpus;
}

std::vector<Gpu> parse_nvidia_smi(std::string_view csv) {
    std::vector<Gpu> out;
    while (!csv.empty()) {
        const size_t end = csv.find('\n');
        std::string_view line = csv.substr(0, end);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        line = text::trim(line);
        csv = end == std::string_view::npos ? std::string_view() : csv.substr(end + 1);
        if (line.empty()) continue;
        std::vector<std::string_view> fields;
        std::string_view rest = line;
        for (size_t comma; (comma = rest.find(',')) != std::string_view::npos && fields.size() < 3; rest.remove_prefix(comma + 1)) {
            fields.push_back(text::trim(rest.substr(0, comma)));
        }
        fields.push_back(text::trim(rest));
        if (fields.size() != 4 || fields[1].rfind("GPU-", 0) != 0) {
            throw std::invalid_argument("nvidia-smi printed a line that is not index, uuid, name, memory: '" + std::string(line) + "'");
        }
        Gpu gpu;
        gpu.index = number(fields[0], "nvidia-smi's index");
        gpu.uuid = std::string(fields[1]);
        gpu.name = std::string(fields[2]);
        // (memory.total in MiB; "[N/A]" on some boards)
        int mib = 0;
        std::from_chars(fields[3].data(), fields[3].data() + fields[3].size(), mib);
        gpu.memory_bytes = static_cast<std::uint64_t>(std::max(mib, 0)) * 1024 * 1024;
        out.push_back(std::move(gpu));
    }
    return out;
}

std::vector<Gpu> allocated_gpus(const std::vector<Gpu>& seen, const std::vector<int>& indexes, int count) {
    if (static_cast<int>(seen.size()) == count) return seen;
    std::vector<Gpu> out;
    for (const Gpu& gpu : seen) {
        if (std::find(indexes.begin(), indexes.end(), gpu.index) != indexes.end()) out.push_back(gpu);
    }
    if (static_cast<int>(out.size()) != count) {
        std::string listed;
        for (int i : indexes) listed += (listed.empty() ? "" : ",") + std::to_string(i);
        throw std::runtime_error("Slurm gave the node " + std::to_string(count) + " GPU(s) (indexes " + listed + "), and " +
                                 std::to_string(out.size()) + " of the " +
                                 std::to_string(seen.size()) + " nvidia-smi lists on its host are among them");
    }
    return out;
}

}  // namespace bai::engine
