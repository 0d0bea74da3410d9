// A node's GPUs on Slurm, read from scontrol's and nvidia-smi's words as they print them.
#include "emulator/engine/slurm_gpus.h"

#include "emulator/engine/gpu_inventory.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>

namespace bai::engine {
namespace {

std::vector<std::string> uuids(const std::vector<Gpu>& gpus) {
    std::vector<std::string> out;
    for (const Gpu& g : gpus) out.push_back(g.uuid);
    return out;
}

TEST(SlurmGpus, TheAllocationsIndexesFromScontrol) {
    // As the test cluster's scontrol printed it (Slurm 22.05), and as other versions and typed
    // GPUs write it.
    EXPECT_EQ(parse_gres_indexes("   JOB_GRES=gpu:1\n     Nodes=host1 CPU_IDs=1 Mem=500 GRES=gpu:1(IDX:0)\n"),
              (std::vector<int>{0}));
    EXPECT_EQ(parse_gres_indexes("Nodes=g7 CPU_IDs=0-7 Mem=0 GRES=gpu:a100:3(IDX:0-1,3)\n"), (std::vector<int>{0, 1, 3}));
    EXPECT_EQ(parse_gres_indexes("Nodes=g7 GRES=gpu(IDX:2),mps:100(0/100,0/100)\n"), (std::vector<int>{2}));
    EXPECT_EQ(parse_gres_indexes("Nodes=c1 CPU_IDs=0 Mem=0 GRES=\n"), (std::vector<int>{}));
    EXPECT_EQ(parse_gres_indexes("JobId=4 JobName=x\n"), (std::vector<int>{}));
    EXPECT_THROW(parse_gres_indexes("Nodes=g GRES=gpu:1(IDX:x)\n"), std::invalid_argument);
    EXPECT_THROW(parse_gres_indexes("Nodes=g GRES=gpu:1(IDX:3-1)\n"), std::invalid_argument);
    EXPECT_THROW(parse_gres_indexes("Nodes=g GRES=gpu:1(IDX:0-99999999)\n"), std::invalid_argument);
}

TEST(SlurmGpus, NvidiaSmisLines) {
    std::vector<Gpu> gpus = parse_nvidia_smi("0, GPU-8e3c0f1a-0000, NVIDIA H100 80GB HBM3, 81559\n"
                                             "1, GPU-77aa, Tesla K80, [N/A]\n\n");
    ASSERT_EQ(gpus.size(), 2u);
    EXPECT_EQ(gpus[0].index, 0);
    EXPECT_EQ(gpus[0].uuid, "GPU-8e3c0f1a-0000");
    EXPECT_EQ(gpus[0].name, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(gpus[0].memory_bytes, 81559ull * 1024 * 1024);
    EXPECT_EQ(gpus[1].memory_bytes, 0u);
    EXPECT_THROW(parse_nvidia_smi("No devices were found\n"), std::invalid_argument);
    EXPECT_THROW(parse_nvidia_smi("x, GPU-1, n, 1\n"), std::invalid_argument);
    EXPECT_TRUE(parse_nvidia_smi("").empty());
    // With the driver's information of each GPU: its device minor, by UUID.
    const std::string info(kGpuInformation);
    std::vector<Gpu> minors = parse_gpu_query(
        "0, GPU-a, NVIDIA H200, 143771\n1, GPU-b, NVIDIA H200, 143771\n" + info + "\nModel: \t\t NVIDIA H200\n"
        "GPU UUID: \t GPU-b\nDevice Minor: \t 3\nBus Location: \t 0000:00:06.0\n" + info +
        "\nGPU UUID: \t GPU-z\nDevice Minor: \t 7\n" + info + "\nGPU UUID: \t GPU-a\nDevice Minor: \t nope\n");
    ASSERT_EQ(minors.size(), 2u);
    EXPECT_EQ(minors[0].minor, -1);  // its minor unreadable
    EXPECT_EQ(minors[1].minor, 3);
    EXPECT_EQ(parse_gpu_query("0, GPU-a, G, 1\n")[0].minor, -1);  // no driver information (fake GPUs)
}

TEST(SlurmGpus, TheNodesAreThoseAtSlurmsIndexesUnlessTheStepSeesOnlyThem) {
    const std::vector<Gpu> host = parse_nvidia_smi("0, GPU-a, G, 1\n1, GPU-b, G, 1\n2, GPU-c, G, 1\n3, GPU-d, G, 1\n");
    EXPECT_EQ(uuids(allocated_gpus(host, {1, 3}, 2)), (std::vector<std::string>{"GPU-b", "GPU-d"}));
    // A cgroup shows the step its own GPUs only, numbered from 0: those are the node's.
    const std::vector<Gpu> constrained = parse_nvidia_smi("0, GPU-c, G, 1\n");
    EXPECT_EQ(uuids(allocated_gpus(constrained, {2}, 1)), (std::vector<std::string>{"GPU-c"}));
    EXPECT_THROW(allocated_gpus(host, {5}, 1), std::runtime_error);
    EXPECT_THROW(allocated_gpus({}, {0}, 1), std::runtime_error);
}

// On a machine with an NVIDIA driver, the words its own nvidia-smi prints for the query a host's
// step runs read as the same GPUs NVML lists; elsewhere it says why it did not run.
TEST(SlurmGpus, ThisMachinesNvidiaSmiReadsAsNvmlsGpus) {
    const GpuInventory nvml = discover_gpus(parse_gpu_source("auto"));
    if (nvml.gpus.empty()) {
        std::printf("SKIPPED: no NVIDIA GPU here (%s)\n", nvml.description.c_str());
        GTEST_SKIP() << nvml.description;
    }
    std::string command;
    for (const std::string& word : gpu_query_argv()) command += "'" + word + "' ";
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
    ASSERT_TRUE(pipe);
    std::string csv;
    char buffer[4096];
    for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe.get())) > 0;) csv.append(buffer, n);
    std::printf("%s", csv.c_str());
    const std::vector<Gpu> smi = parse_gpu_query(csv);
    ASSERT_EQ(smi.size(), nvml.gpus.size()) << csv;
    for (size_t i = 0; i < smi.size(); ++i) {
        EXPECT_EQ(smi[i].index, nvml.gpus[i].index);
        EXPECT_EQ(smi[i].uuid, nvml.gpus[i].uuid);
        EXPECT_EQ(smi[i].name, nvml.gpus[i].name);
        // nvidia-smi prints whole MiB.
        EXPECT_LE(smi[i].memory_bytes, nvml.gpus[i].memory_bytes);
        EXPECT_LT(nvml.gpus[i].memory_bytes - smi[i].memory_bytes, 1024u * 1024u);
        // The driver's information names its device node, as NVML's minor number does.
        EXPECT_EQ(smi[i].minor, nvml.gpus[i].minor);
        EXPECT_GE(smi[i].minor, 0);
    }
}

}  // namespace
}  // namespace bai::engine
