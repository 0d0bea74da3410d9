#include "emulator/validation/vm_sizes.h"

#include "common/text/ascii.h"

namespace bai::validation {
namespace {

// From Azure's "Sizes for Linux virtual machines" pages of the Batch AI era (2017-2019). GPU
// counts are what the VM exposes: an NC6 has one GPU, half of a K80 board.
constexpr VmSize kSizes[] = {
    // GPU: NC (K80), NCv2 (P100), NCv3 (V100), ND (P40), NDv2 (V100), NV (M60), NVv2, NVv3
    {"Standard_NC6", 6, 56, 1, "K80"},
    {"Standard_NC12", 12, 112, 2, "K80"},
    {"Standard_NC24", 24, 224, 4, "K80"},
    {"Standard_NC24r", 24, 224, 4, "K80"},
    {"Standard_NC6s_v2", 6, 112, 1, "P100"},
    {"Standard_NC12s_v2", 12, 224, 2, "P100"},
    {"Standard_NC24s_v2", 24, 448, 4, "P100"},
    {"Standard_NC24rs_v2", 24, 448, 4, "P100"},
    {"Standard_NC6s_v3", 6, 112, 1, "V100"},
    {"Standard_NC12s_v3", 12, 224, 2, "V100"},
    {"Standard_NC24s_v3", 24, 448, 4, "V100"},
    {"Standard_NC24rs_v3", 24, 448, 4, "V100"},
    {"Standard_ND6s", 6, 112, 1, "P40"},
    {"Standard_ND12s", 12, 224, 2, "P40"},
    {"Standard_ND24s", 24, 448, 4, "P40"},
    {"Standard_ND24rs", 24, 448, 4, "P40"},
    {"Standard_ND40s_v2", 40, 672, 8, "V100"},
    {"Standard_ND40rs_v2", 40, 672, 8, "V100"},
    {"Standard_NV6", 6, 56, 1, "M60"},
    {"Standard_NV12", 12, 112, 2, "M60"},
    {"Standard_NV24", 24, 224, 4, "M60"},
    {"Standard_NV6s_v2", 6, 112, 1, "M60"},
    {"Standard_NV12s_v2", 12, 224, 2, "M60"},
    {"Standard_NV24s_v2", 24, 448, 4, "M60"},
    {"Standard_NV12s_v3", 12, 112, 1, "M60"},
    {"Standard_NV24s_v3", 24, 224, 2, "M60"},
    {"Standard_NV48s_v3", 48, 448, 4, "M60"},
    // General purpose and compute: A, Av2, D, Dv2, Dv3, F, H
    {"Standard_A0", 1, 0.75, 0, "", false},
    {"Standard_A1", 1, 1.75, 0, ""},
    {"Standard_A2", 2, 3.5, 0, ""},
    {"Standard_A3", 4, 7, 0, ""},
    {"Standard_A4", 8, 14, 0, ""},
    {"Standard_A5", 2, 14, 0, ""},
    {"Standard_A6", 4, 28, 0, ""},
    {"Standard_A7", 8, 56, 0, ""},
    {"Standard_A8", 8, 56, 0, ""},
    {"Standard_A9", 16, 112, 0, ""},
    {"Standard_A10", 8, 56, 0, ""},
    {"Standard_A11", 16, 112, 0, ""},
    {"Standard_A1_v2", 1, 2, 0, ""},
    {"Standard_A2_v2", 2, 4, 0, ""},
    {"Standard_A4_v2", 4, 8, 0, ""},
    {"Standard_A8_v2", 8, 16, 0, ""},
    {"Standard_A2m_v2", 2, 16, 0, ""},
    {"Standard_A4m_v2", 4, 32, 0, ""},
    {"Standard_A8m_v2", 8, 64, 0, ""},
    {"Standard_D1", 1, 3.5, 0, ""},
    {"Standard_D2", 2, 7, 0, ""},
    {"Standard_D3", 4, 14, 0, ""},
    {"Standard_D4", 8, 28, 0, ""},
    {"Standard_D11", 2, 14, 0, ""},
    {"Standard_D12", 4, 28, 0, ""},
    {"Standard_D13", 8, 56, 0, ""},
    {"Standard_D14", 16, 112, 0, ""},
    {"Standard_D1_v2", 1, 3.5, 0, ""},
    {"Standard_D2_v2", 2, 7, 0, ""},
    {"Standard_D3_v2", 4, 14, 0, ""},
    {"Standard_D4_v2", 8, 28, 0, ""},
    {"Standard_D5_v2", 16, 56, 0, ""},
    {"Standard_D11_v2", 2, 14, 0, ""},
    {"Standard_D12_v2", 4, 28, 0, ""},
    {"Standard_D13_v2", 8, 56, 0, ""},
    {"Standard_D14_v2", 16, 112, 0, ""},
    {"Standard_D15_v2", 20, 140, 0, ""},
    {"Standard_D2_v3", 2, 8, 0, ""},
    {"Standard_D4_v3", 4, 16, 0, ""},
    {"Standard_D8_v3", 8, 32, 0, ""},
    {"Standard_D16_v3", 16, 64, 0, ""},
    {"Standard_D32_v3", 32, 128, 0, ""},
    {"Standard_D64_v3", 64, 256, 0, ""},
    {"Standard_E2_v3", 2, 16, 0, ""},
    {"Standard_E4_v3", 4, 32, 0, ""},
    {"Standard_E8_v3", 8, 64, 0, ""},
    {"Standard_E16_v3", 16, 128, 0, ""},
    {"Standard_E32_v3", 32, 256, 0, ""},
    {"Standard_E64_v3", 64, 432, 0, ""},
    {"Standard_F1", 1, 2, 0, ""},
    {"Standard_F2", 2, 4, 0, ""},
    {"Standard_F4", 4, 8, 0, ""},
    {"Standard_F8", 8, 16, 0, ""},
    {"Standard_F16", 16, 32, 0, ""},
    {"Standard_H8", 8, 56, 0, ""},
    {"Standard_H16", 16, 112, 0, ""},
    {"Standard_H8m", 8, 112, 0, ""},
    {"Standard_H16m", 16, 224, 0, ""},
    {"Standard_H16r", 16, 112, 0, ""},
    {"Standard_H16mr", 16, 224, 0, ""},
    // Premium storage series: refused by the service.
    {"Standard_DS1", 1, 3.5, 0, "", false},
    {"Standard_DS2", 2, 7, 0, "", false},
    {"Standard_DS3", 4, 14, 0, "", false},
    {"Standard_DS4", 8, 28, 0, "", false},
    {"Standard_DS11", 2, 14, 0, "", false},
    {"Standard_DS12", 4, 28, 0, "", false},
    {"Standard_DS13", 8, 56, 0, "", false},
    {"Standard_DS14", 16, 112, 0, "", false},
    {"Standard_DS1_v2", 1, 3.5, 0, "", false},
    {"Standard_DS2_v2", 2, 7, 0, "", false},
    {"Standard_DS3_v2", 4, 14, 0, "", false},
    {"Standard_DS4_v2", 8, 28, 0, "", false},
    {"Standard_DS5_v2", 16, 56, 0, "", false},
    {"Standard_DS11_v2", 2, 14, 0, "", false},
    {"Standard_DS12_v2", 4, 28, 0, "", false},
    {"Standard_DS13_v2", 8, 56, 0, "", false},
    {"Standard_DS14_v2", 16, 112, 0, "", false},
    {"Standard_DS15_v2", 20, 140, 0, "", false},
    {"Standard_GS1", 2, 28, 0, "", false},
    {"Standard_GS2", 4, 56, 0, "", false},
    {"Standard_GS3", 8, 112, 0, "", false},
    {"Standard_GS4", 16, 224, 0, "", false},
    {"Standard_GS5", 32, 448, 0, "", false},
};

constexpr std::string_view kPrefix = "standard_";

}  // namespace

std::optional<VmSize> find_vm_size(std::string_view name) {
    // Compared without the prefix, which every name in the table has.
    std::string_view bare = name;
    if (bare.size() >= kPrefix.size() && text::iequals(bare.substr(0, kPrefix.size()), kPrefix)) {
        bare.remove_prefix(kPrefix.size());
    }
    for (const VmSize& size : kSizes) {
        if (text::iequals(size.name.substr(kPrefix.size()), bare)) return size;
    }
    return std::nullopt;
}

std::span<const VmSize> all_vm_sizes() { return kSizes; }

std::string vm_size_problem(std::string_view name) {
    std::optional<VmSize> size = find_vm_size(name);
    if (!size) {
        std::string problem(name);
        // A user's message, not the project's: the sizes are named as az and the portal name them.
        problem += " is not a VM size that Batch AI offered (such as STANDARD_NC6, STANDARD_NC24R or STANDARD_D1_V2)";
        return problem;
    }
    if (!size->supported) {
        return "Batch AI does not support " + std::string(size->name) +
               ": it supports every VM size except STANDARD_A0 and those with premium storage (the STANDARD_GS, "
               "STANDARD_DS and STANDARD_DSV2 series)";
    }
    return "";
}

}  // namespace bai::validation
