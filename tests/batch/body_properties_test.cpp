// Request bodies against the Batch service's types (body_properties.h).
#include <gtest/gtest.h>

#include "emulator/batch/batch_error.h"
#include "emulator/batch/body_properties.h"

namespace bai::batch {
namespace {

using nlohmann::json;

TEST(BodyProperties, KnownPropertiesPassAtEveryDepth) {
    const json pool = json::parse(R"({"id": "p", "vmSize": "small", "targetDedicatedNodes": 1,
        "virtualMachineConfiguration": {"imageReference": {"publisher": "canonical", "offer": "o", "sku": "s"},
                                        "nodeAgentSKUId": "batch.node.ubuntu 18.04"},
        "startTask": {"commandLine": "x", "resourceFiles": [{"httpUrl": "http://127.0.0.1/a", "filePath": "a"}],
                      "userIdentity": {"autoUser": {"scope": "pool", "elevationLevel": "admin"}}},
        "metadata": [{"name": "a", "value": "b"}]})");
    EXPECT_EQ(unknown_property(pool, "PoolAddParameter"), std::nullopt);
}

TEST(BodyProperties, AnUnknownPropertyIsNamedByItsPath) {
    EXPECT_EQ(unknown_property(json::parse(R"({"id": "p", "bogus": 1})"), "PoolAddParameter"), "bogus");
    EXPECT_EQ(unknown_property(json::parse(R"({"id": "p", "startTask": {"commandLine": "x", "resourceFiles": [{"httpUrl": "u"}, {"url": "u"}]}})"),
                               "PoolAddParameter"),
              "startTask.resourceFiles[1].url");
    EXPECT_EQ(unknown_property(json::parse(R"({"id": "s", "schedule": {}, "jobSpecification": {"poolInfo": {"poolID": "p"}}})"),
                               "JobScheduleAddParameter"),
              "jobSpecification.poolInfo.poolID");  // names are case-sensitive, as the service's JSON
    EXPECT_EQ(unknown_property(json::parse(R"({"maxTasksPerNode": 4})"), "PoolAddParameter"), "maxTasksPerNode");
    EXPECT_EQ(unknown_property(json::parse(R"({"anything": 1})"), "NoSuchDefinition"), std::nullopt);
    try {
        refuse_unknown_properties(json::parse(R"({"id": "t", "commandLine": "x", "constraints": {"maxRetries": 2}})"), "TaskAddParameter");
        FAIL() << "not refused";
    } catch (const BatchError& e) {
        EXPECT_EQ((std::pair{e.status, e.code}), (std::pair{400, std::string("InvalidRequestBody")}));
        EXPECT_EQ(e.values.at(0), (std::pair<std::string, std::string>{"PropertyName", "constraints.maxRetries"}));
    }
}

}  // namespace
}  // namespace bai::batch
