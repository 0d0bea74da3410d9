// The Azure VM sizes a Batch AI cluster or file server could use, with what an emulated node of
// each size gets: cores, memory and GPUs. Names compare case-insensitively ("STANDARD_NC6" and
// "Standard_NC6" are one size). The service refused STANDARD_A0 and the premium-storage series
// (STANDARD_GS, STANDARD_DS and STANDARD_DSV2, per the 2018-05-01 spec); those are known here so
// that the refusal can say why.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace bai::validation {

struct VmSize {
    std::string_view name;  // as Azure writes it, e.g. "Standard_NC24rs_v3"
    int cores;
    double memory_gib;
    int gpus;                   // 0 for CPU sizes
    std::string_view gpu_model;  // "K80", "P100", "V100", "P40", "M60", "" for none
    bool supported = true;      // false: A0 and the premium-storage series
};

// The size named `name` (any case, with or without the "Standard_" prefix), nullopt if unknown.
std::optional<VmSize> find_vm_size(std::string_view name);
// Every size in the table, supported or not, in table order.
std::span<const VmSize> all_vm_sizes();
// Empty when `name` is a supported size, else why not (for a 400 naming properties.vmSize).
std::string vm_size_problem(std::string_view name);

}  // namespace bai::validation
