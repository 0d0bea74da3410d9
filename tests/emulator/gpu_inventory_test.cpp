#include "emulator/engine/gpu_inventory.h"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>

namespace bai::engine {
namespace {

TEST(GpuSource, ParsesTheThreeFormsAndNamesABadValue) {
    EXPECT_EQ(parse_gpu_source("auto").kind, GpuSource::Kind::automatic);
    EXPECT_EQ(parse_gpu_source("none").kind, GpuSource::Kind::none);
    GpuSource fake = parse_gpu_source("fake:4");
    EXPECT_EQ(fake.kind, GpuSource::Kind::fake);
    EXPECT_EQ(fake.fake_count, 4);
    EXPECT_EQ(parse_gpu_source("fake:0").fake_count, 0);
    for (const char* bad : {"", "fake:", "fake:-1", "fake:65", "fake:999", "fake:2x", "all", "FAKE:2"}) {
        try {
            parse_gpu_source(bad);
            ADD_FAILURE() << "accepted '" << bad << "'";
        } catch (const std::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find("--gpus"), std::string::npos);
        }
    }
}

TEST(GpuInventory, FakeGpusHaveDistinctStableUuids) {
    GpuInventory inventory = discover_gpus(parse_gpu_source("fake:8"));
    ASSERT_EQ(inventory.gpus.size(), 8u);
    std::set<std::string> uuids;
    for (size_t i = 0; i < inventory.gpus.size(); ++i) {
        const Gpu& gpu = inventory.gpus[i];
        EXPECT_EQ(gpu.index, static_cast<int>(i));
        EXPECT_TRUE(gpu.fake);
        EXPECT_EQ(gpu.uuid.rfind("GPU-", 0), 0u);
        EXPECT_EQ(gpu.uuid.size(), 40u);  // GPU- and a 36-character UUID, as NVML writes them
        uuids.insert(gpu.uuid);
    }
    EXPECT_EQ(uuids.size(), 8u);
    EXPECT_EQ(fake_gpus(8)[3].uuid, inventory.gpus[3].uuid);
}

TEST(GpuInventory, NoneIsEmpty) {
    GpuInventory inventory = discover_gpus(parse_gpu_source("none"));
    EXPECT_TRUE(inventory.gpus.empty());
    EXPECT_NE(inventory.description.find("none"), std::string::npos);
}

// On a machine with an NVIDIA driver this lists its GPUs; elsewhere it says why there are none.
TEST(GpuInventory, AutomaticUsesNvmlWhenADriverAnswers) {
    GpuInventory inventory = discover_gpus(parse_gpu_source("auto"));
    if (inventory.gpus.empty()) {
        std::printf("SKIPPED: no NVIDIA GPU here (%s)\n", inventory.description.c_str());
        GTEST_SKIP() << inventory.description;
    }
    for (const Gpu& gpu : inventory.gpus) {
        EXPECT_FALSE(gpu.fake);
        EXPECT_EQ(gpu.uuid.rfind("GPU-", 0), 0u) << gpu.uuid;
        EXPECT_GT(gpu.memory_bytes, 0u);
        std::printf("GPU %d %s %s\n", gpu.index, gpu.uuid.c_str(), gpu.name.c_str());
    }
}

}  // namespace
}  // namespace bai::engine
