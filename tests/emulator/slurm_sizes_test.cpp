// What a vmSize asks of Slurm: its own cores, memory and GPUs, or the site's size map's.
#include "emulator/engine/slurm_sizes.h"

#include <gtest/gtest.h>

namespace bai::engine {
namespace {

validation::VmSize size(std::string_view name) { return *validation::find_vm_size(name); }

TEST(SlurmSizes, AVmSizeAsksForItsOwnCoresMemoryAndGpus) {
    HostSize nc6 = host_size({}, size("Standard_NC6"));
    EXPECT_EQ(nc6.cores, 6);
    EXPECT_EQ(nc6.memory_mib, 56 * 1024);
    EXPECT_EQ(nc6.gpus, 1);
    EXPECT_EQ(host_size({}, size("STANDARD_D1")).memory_mib, 3584);  // 3.5 GiB
}

TEST(SlurmSizes, TheMapReplacesTheFieldsItNamesForAnySpellingOfTheSize) {
    SizeMap map = parse_size_map(R"({"standard_nc6": {"cores": 8, "gpus": 2}, "D1": {"memoryMiB": 0}})");
    HostSize nc6 = host_size(map, size("Standard_NC6"));
    EXPECT_EQ(nc6.cores, 8);
    EXPECT_EQ(nc6.memory_mib, 56 * 1024);  // not named: the vmSize's
    EXPECT_EQ(nc6.gpus, 2);
    EXPECT_EQ(host_size(map, size("Standard_D1")).memory_mib, 0);  // the partition's default
    EXPECT_EQ(host_size(map, size("Standard_D2")).cores, 2);       // not in the map
}

TEST(SlurmSizes, ABadMapIsRefusedNamingWhatIsWrong) {
    auto refusal = [](std::string_view text) {
        try {
            parse_size_map(text);
        } catch (const std::invalid_argument& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    EXPECT_EQ(refusal("{"), "the size map is not valid JSON");
    EXPECT_EQ(refusal("[]"), "the size map must be a JSON object of vmSizes");
    EXPECT_EQ(refusal(R"({"Standard_Z9": {}})"), "the size map names an unknown vmSize 'Standard_Z9'");
    EXPECT_EQ(refusal(R"({"NC6": 4})"), "the size map's NC6 must be an object");
    EXPECT_EQ(refusal(R"({"NC6": {"cpus": 4}})"), "the size map's NC6.cpus is not a field of a size (cores, memoryMiB, gpus)");
    EXPECT_EQ(refusal(R"({"NC6": {"cores": 0}})"), "the size map's NC6.cores must be a whole number from 1 to 4096, not 0");
    EXPECT_EQ(refusal(R"({"NC6": {"gpus": 1.5}})"), "the size map's NC6.gpus must be a whole number from 0 to 64, not 1.5");
    EXPECT_EQ(refusal(R"({"NC6": {"memoryMiB": "8G"}})"),
              "the size map's NC6.memoryMiB must be a whole number from 0 to 67108864, not \"8G\"");
    EXPECT_EQ(refusal(R"({"NC6": {}, "standard_nc6": {}})"), "the size map names Standard_NC6 twice ('standard_nc6')");
}

}  // namespace
}  // namespace bai::engine
