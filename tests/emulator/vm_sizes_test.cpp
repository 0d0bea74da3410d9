#include "emulator/validation/vm_sizes.h"

#include <gtest/gtest.h>

#include <set>

#include "common/text/ascii.h"
#include "emulator/validation/validator.h"

namespace bai::validation {
namespace {

TEST(VmSizes, NamesMatchInAnyCaseWithOrWithoutThePrefix) {
    for (const char* name : {"STANDARD_NC6", "Standard_NC6", "standard_nc6", "NC6"}) {
        auto size = find_vm_size(name);
        ASSERT_TRUE(size) << name;
        EXPECT_EQ(size->name, "Standard_NC6");
        EXPECT_EQ(size->gpus, 1);
        EXPECT_EQ(size->cores, 6);
    }
    EXPECT_FALSE(find_vm_size("Standard_NC7"));
    EXPECT_FALSE(find_vm_size(""));
}

TEST(VmSizes, TheSeriesTheIssueNamesAreThereWithTheirGpus) {
    EXPECT_EQ(find_vm_size("STANDARD_NC12")->gpus, 2);
    EXPECT_EQ(find_vm_size("STANDARD_NC24")->gpus, 4);
    EXPECT_EQ(find_vm_size("STANDARD_NC24R")->gpus, 4);
    EXPECT_EQ(find_vm_size("Standard_NC6s_v2")->gpu_model, "P100");
    EXPECT_EQ(find_vm_size("Standard_NC24rs_v3")->gpu_model, "V100");
    EXPECT_EQ(find_vm_size("Standard_ND24s")->gpus, 4);
    EXPECT_EQ(find_vm_size("Standard_NV6")->gpu_model, "M60");
    for (int n : {1, 2, 3, 4, 5, 11, 12, 13, 14, 15}) {
        auto size = find_vm_size("STANDARD_D" + std::to_string(n) + "_V2");
        ASSERT_TRUE(size) << n;
        EXPECT_EQ(size->gpus, 0);
        EXPECT_TRUE(size->supported);
    }
    EXPECT_EQ(find_vm_size("STANDARD_D1")->memory_gib, 3.5);
}

TEST(VmSizes, NamesAreUniqueAndEveryGpuSizeNamesItsModel) {
    std::set<std::string> seen;
    for (const VmSize& size : all_vm_sizes()) {
        EXPECT_TRUE(seen.insert(text::lower(size.name)).second) << size.name;
        EXPECT_GT(size.cores, 0) << size.name;
        EXPECT_EQ(size.gpus > 0, !size.gpu_model.empty()) << size.name;
    }
}

TEST(VmSizes, TheServiceRefusedA0AndThePremiumStorageSeries) {
    for (const char* name : {"STANDARD_A0", "Standard_DS3", "Standard_DS2_v2", "Standard_GS1"}) {
        EXPECT_NE(vm_size_problem(name).find("does not support"), std::string::npos) << name;
    }
    EXPECT_NE(vm_size_problem("Standard_Z9").find("not a VM size"), std::string::npos);
    EXPECT_EQ(vm_size_problem("Standard_Z9").find(".cpp"), std::string::npos);  // no source file in a user's error
    EXPECT_EQ(vm_size_problem("STANDARD_D2_V2"), "");
}

TEST(VmSizes, ClusterAndFileServerBodiesNameTheField) {
    nlohmann::json cluster = {{"properties",
                               {{"vmSize", "Standard_DS2_v2"},
                                {"scaleSettings", {{"manual", {{"targetNodeCount", 1}}}}},
                                {"userAccountSettings", {{"adminUserName", "u"}, {"adminUserPassword", "p"}}}}}};
    Report r = validate(cluster, ResourceKind::cluster, ApiVersion::v2018_05_01, Mode::rest);
    ASSERT_EQ(r.errors.size(), 1u);
    EXPECT_EQ(r.errors[0].path, "properties.vmSize");
    cluster["properties"]["vmSize"] = "standard_nc6";
    EXPECT_TRUE(validate(cluster, ResourceKind::cluster, ApiVersion::v2018_05_01, Mode::rest).ok());

    nlohmann::json server = {{"properties",
                              {{"vmSize", "STANDARD_A0"},
                               {"sshConfiguration", {{"userAccountSettings", {{"adminUserName", "u"}, {"adminUserPassword", "p"}}}}},
                               {"dataDisks", {{"diskSizeInGB", 10}, {"diskCount", 1}, {"storageAccountType", "Standard_LRS"}}}}}};
    r = validate(server, ResourceKind::file_server, ApiVersion::v2018_05_01, Mode::rest);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.errors[0].path, "properties.vmSize");
}

}  // namespace
}  // namespace bai::validation
