// A node's GPUs on Slurm (slurm.md, "Sizes"): the indexes Slurm gave its holder job (`scontrol
// show job -d`: GRES=gpu:2(IDX:0-1)) and the host's GPUs as nvidia-smi lists them inside a step of
// the holder that asks for them; the node's are those at Slurm's indexes, by their UUIDs (what the
// job's CUDA_VISIBLE_DEVICES and the node's listing show, as locally).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "emulator/engine/gpu_inventory.h"

namespace bai::engine {

std::vector<std::string> scontrol_job_argv(const std::string& job);
// The GPU indexes of the job's allocation in `scontrol show job -d` output; empty when it has none.
// Throws std::invalid_argument on an index list it cannot read.
std::vector<int> parse_gres_indexes(std::string_view scontrol_job_detail);

// What runs after the step's prefix: nvidia-smi, one CSV line per GPU it sees; then, for each GPU
// the driver lists in /proc/driver/nvidia/gpus/*/information (its UUID and device minor: the
// N of /dev/nvidiaN, which nvidia-smi's queries do not give), a line kGpuInformation and that file.
std::vector<std::string> gpu_query_argv();
inline constexpr std::string_view kGpuInformation = "-- bai: driver information of a GPU";
// nvidia-smi's lines ("0, GPU-8e3c..., NVIDIA H100 80GB HBM3, 81559"); throws std::invalid_argument
// on a line it cannot read.
std::vector<Gpu> parse_nvidia_smi(std::string_view csv);
// gpu_query_argv's output: nvidia-smi's GPUs, each with its device minor where the driver's
// information names its UUID (-1 otherwise: no device to bind).
std::vector<Gpu> parse_gpu_query(std::string_view output);

// The allocation's `count` GPUs among those the step saw: all of them when the step sees just
// that many (Slurm's cgroup constrains its devices, and NVML numbers them from 0), else those at
// Slurm's indexes (the host's numbering). Throws std::runtime_error when that is not `count` GPUs.
std::vector<Gpu> allocated_gpus(const std::vector<Gpu>& seen, const std::vector<int>& indexes, int count);

}  // namespace bai::engine
