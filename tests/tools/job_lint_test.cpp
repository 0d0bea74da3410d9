#include "tools/bai/job_lint.h"

#include <gtest/gtest.h>

namespace bai::cli {
namespace {

using nlohmann::json;

std::vector<std::string> paths(const std::vector<validation::Finding>& findings) {
    std::vector<std::string> out;
    for (const auto& f : findings) out.push_back(f.path);
    return out;
}

json job(json properties) { return {{"properties", std::move(properties)}}; }

TEST(JobLint, ACleanRecipeJobHasNoWarnings) {
    json j = job({{"nodeCount", 2},
                  {"horovodSettings", {{"pythonScriptFilePath", "$AZ_BATCHAI_JOB_MOUNT_ROOT/scripts/train.py"},
                                       {"commandLineArgs", "--out $AZ_BATCHAI_OUTPUT_MODEL --in $AZ_BATCHAI_INPUT_DATA"}}},
                  {"stdOutErrPathPrefix", "$AZ_BATCHAI_MOUNT_ROOT/afs"},
                  {"inputDirectories", {{{"id", "DATA"}, {"path", "$AZ_BATCHAI_MOUNT_ROOT/afs/data"}}}},
                  {"outputDirectories", {{{"id", "MODEL"}, {"pathPrefix", "${AZ_BATCHAI_MOUNT_ROOT}/afs"}}}},
                  {"containerSettings", {{"imageSourceRegistry", {{"image", "tensorflow/tensorflow:1.8.0-gpu"}}}}}});
    EXPECT_TRUE(lint_job(j, {"STANDARD_NC12"}).empty());
}

TEST(JobLint, EachSurpriseIsAWarningAtItsPath) {
    json j = job({{"nodeCount", 1},
                  {"tensorFlowSettings", {{"pythonScriptFilePath", "/home/me/train.py"}, {"workerCount", 3}}},
                  {"stdOutErrPathPrefix", "/tmp/logs"},
                  {"outputDirectories", {{{"id", "OUT"}, {"pathPrefix", "/outputs"}}}},
                  {"environmentVariables", {{{"name", "AZ_BATCHAI_MINE"}, {"value", "1"}}}},
                  {"jobPreparation", {{"commandLine", "echo $AZ_BATCHAI_JOB_NAME $AZ_BATCHAI_MINE $AZ_BATCHAI_OUTPUT_OUT"}}},
                  {"containerSettings", {{"imageSourceRegistry", {{"image", "registry.io:5000/team/tf"}}}}}});
    auto found = paths(lint_job(j, {"STANDARD_NC6"}));
    EXPECT_EQ(found, (std::vector<std::string>{
                         "properties.containerSettings.imageSourceRegistry.image",  // no tag (the port is not one)
                         "properties.tensorFlowSettings.workerCount",              // 3 workers, 1 GPU
                         "properties.stdOutErrPathPrefix",
                         "properties.outputDirectories[0].pathPrefix",
                         "properties.jobPreparation.commandLine",                  // AZ_BATCHAI_JOB_NAME
                         "properties.tensorFlowSettings.pythonScriptFilePath"}));
    EXPECT_EQ(paths(lint_job(j, {})).size(), 5u);  // no vmSize given: no GPU check
}

TEST(JobLint, LatestIsNotAPinAndADigestIs) {
    auto image = [](const char* name) {
        return job({{"containerSettings", {{"imageSourceRegistry", {{"image", name}}}}}});
    };
    EXPECT_EQ(lint_job(image("ubuntu:latest"), {}).size(), 1u);
    EXPECT_TRUE(lint_job(image("ubuntu@sha256:abc"), {}).empty());
    EXPECT_TRUE(lint_job(image("ubuntu:22.04"), {}).empty());
}

TEST(JobLint, EveryValidatorErrorGetsAHint) {
    for (const char* message : {"is required", "must be one of a, b, not \"c\"", "is not valid JSON: x",
                                "must be an integer, not \"1\"", "anything else"}) {
        EXPECT_FALSE(hint_for({"properties.x", message}).empty()) << message;
    }
    EXPECT_EQ(hint_for({"properties.cluster.id", "is required"}), "add \"id\"");
}

}  // namespace
}  // namespace bai::cli
