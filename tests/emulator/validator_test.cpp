#include "emulator/validation/validator.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "emulator/validation/duration.h"

namespace bai::validation {
namespace {

using nlohmann::json;

json good_job() {
    return json::parse(R"({
      "properties": {
        "cluster": {"id": "/subscriptions/s/resourceGroups/g/providers/Microsoft.BatchAI/workspaces/w/clusters/c"},
        "nodeCount": 2,
        "schedulingPriority": "high",
        "stdOutErrPathPrefix": "$AZ_BATCHAI_MOUNT_ROOT/afs",
        "inputDirectories": [{"id": "DATASET", "path": "$AZ_BATCHAI_MOUNT_ROOT/afs/data"}],
        "outputDirectories": [{"id": "MODEL", "pathPrefix": "$AZ_BATCHAI_MOUNT_ROOT/afs"}],
        "tensorFlowSettings": {"pythonScriptFilePath": "train.py", "workerCount": 2, "parameterServerCount": 1},
        "constraints": {"maxWallClockTime": "PT1H"},
        "containerSettings": {"imageSourceRegistry": {"image": "tensorflow/tensorflow:1.8.0-gpu"}, "shmSize": "2g"},
        "secrets": [{"name": "TOKEN", "value": "x"}],
        "mountVolumes": {"azureFileShares": [{"accountName": "a", "azureFileUrl": "https://a.file.core.windows.net/s",
                         "credentials": {"accountKey": "k"}, "relativeMountPath": "afs"}]}
      }})");
}

Report check(const json& body, Mode mode = Mode::rest, ResourceKind kind = ResourceKind::job,
             ApiVersion version = ApiVersion::v2018_05_01) {
    return validate(body, kind, version, mode);
}

std::string errors_of(const Report& r) {
    std::string out;
    for (const auto& e : r.errors) out += e.path + ": " + e.message + "\n";
    return out;
}

bool has_error_at(const Report& r, const std::string& path) {
    for (const auto& e : r.errors) {
        if (e.path == path) return true;
    }
    return false;
}

TEST(Validator, AGoodJobPasses) {
    Report r = check(good_job());
    EXPECT_TRUE(r.ok()) << errors_of(r);
    EXPECT_TRUE(r.warnings.empty());
}

struct Mutation {
    const char* name;
    std::function<void(json&)> change;
    const char* path;
};

TEST(Validator, MutationsAreRefusedAtTheirJsonPath) {
    const std::vector<Mutation> mutations = {
        {"missing nodeCount", [](json& j) { j["properties"].erase("nodeCount"); }, "properties.nodeCount"},
        {"missing stdOutErrPathPrefix", [](json& j) { j["properties"].erase("stdOutErrPathPrefix"); },
         "properties.stdOutErrPathPrefix"},
        {"missing cluster (REST)", [](json& j) { j["properties"].erase("cluster"); }, "properties.cluster"},
        {"wrong enum", [](json& j) { j["properties"]["schedulingPriority"] = "urgent"; },
         "properties.schedulingPriority"},
        {"two toolkits", [](json& j) { j["properties"]["customToolkitSettings"] = {{"commandLine", "x"}}; },
         "properties.customToolkitSettings"},
        {"no toolkit", [](json& j) { j["properties"].erase("tensorFlowSettings"); }, "properties"},
        {"negative nodeCount", [](json& j) { j["properties"]["nodeCount"] = -1; }, "properties.nodeCount"},
        {"nodeCount as a string", [](json& j) { j["properties"]["nodeCount"] = "2"; }, "properties.nodeCount"},
        {"nodeCount beyond int32", [](json& j) { j["properties"]["nodeCount"] = 4294967296LL; },
         "properties.nodeCount"},
        {"bad duration", [](json& j) { j["properties"]["constraints"]["maxWallClockTime"] = "7 days"; },
         "properties.constraints.maxWallClockTime"},
        {"duration over 7 days", [](json& j) { j["properties"]["constraints"]["maxWallClockTime"] = "P8D"; },
         "properties.constraints.maxWallClockTime"},
        {"duplicate directory id",
         [](json& j) { j["properties"]["outputDirectories"].push_back({{"id", "MODEL"}, {"pathPrefix", "x"}}); },
         "properties.outputDirectories[1].id"},
        {"directory id not usable in a variable name",
         [](json& j) { j["properties"]["inputDirectories"][0]["id"] = "my-data"; }, "properties.inputDirectories[0].id"},
        {"missing required in an array item", [](json& j) { j["properties"]["outputDirectories"][0].erase("pathPrefix"); },
         "properties.outputDirectories[0].pathPrefix"},
        {"more parameter servers than nodes",
         [](json& j) { j["properties"]["tensorFlowSettings"]["parameterServerCount"] = 3; },
         "properties.tensorFlowSettings.parameterServerCount"},
        {"processCount 0",
         [](json& j) {
             j["properties"].erase("tensorFlowSettings");
             j["properties"]["horovodSettings"] = {{"pythonScriptFilePath", "x.py"}, {"processCount", 0}};
         },
         "properties.horovodSettings.processCount"},
        {"secret without value", [](json& j) { j["properties"]["secrets"][0].erase("value"); }, "properties.secrets[0]"},
        {"bad shmSize", [](json& j) { j["properties"]["containerSettings"]["shmSize"] = "lots"; },
         "properties.containerSettings.shmSize"},
        {"mount path escaping the root",
         [](json& j) { j["properties"]["mountVolumes"]["azureFileShares"][0]["relativeMountPath"] = "../etc"; },
         "properties.mountVolumes.azureFileShares[0].relativeMountPath"},
        {"storage credentials with both key and reference",
         [](json& j) {
             j["properties"]["mountVolumes"]["azureFileShares"][0]["credentials"]["accountKeySecretReference"] =
                 {{"sourceVault", {{"id", "v"}}}, {"secretUrl", "u"}};
         },
         "properties.mountVolumes.azureFileShares[0].credentials"},
        {"object where a string goes", [](json& j) { j["properties"]["stdOutErrPathPrefix"] = json::object(); },
         "properties.stdOutErrPathPrefix"},
        {"properties not an object", [](json& j) { j["properties"] = json::array(); }, "properties"},
    };
    for (const Mutation& m : mutations) {
        json body = good_job();
        m.change(body);
        Report r = check(body);
        EXPECT_TRUE(has_error_at(r, m.path)) << m.name << ", got:\n" << errors_of(r);
    }
}

TEST(Validator, CaffeAndCntkFieldRules) {
    json body = good_job();
    body["properties"].erase("tensorFlowSettings");
    body["properties"]["caffeSettings"] = {{"configFilePath", "a"}, {"pythonScriptFilePath", "b"}};
    EXPECT_TRUE(has_error_at(check(body), "properties.caffeSettings"));
    body["properties"]["caffeSettings"] = {{"configFilePath", "a"}, {"pythonInterpreterPath", "python3"}};
    EXPECT_TRUE(has_error_at(check(body), "properties.caffeSettings.pythonInterpreterPath"));
    body["properties"].erase("caffeSettings");
    body["properties"]["cntkSettings"] = {{"languageType", "Python"}, {"configFilePath", "a.cntk"}};
    EXPECT_TRUE(has_error_at(check(body), "properties.cntkSettings.configFilePath"));
    body["properties"]["cntkSettings"] = {{"pythonScriptFilePath", "a.py"}};  // as the recipes write it
    EXPECT_TRUE(check(body).ok()) << errors_of(check(body));
}

TEST(Validator, EnumsCompareWithoutCaseAndDurationsInBothForms) {
    json body = good_job();
    body["properties"]["schedulingPriority"] = "HIGH";
    body["properties"]["constraints"]["maxWallClockTime"] = "1.00:00:00";
    EXPECT_TRUE(check(body).ok()) << errors_of(check(body));
    EXPECT_EQ(parse_duration("P7D")->count(), 7 * 86400);
    EXPECT_EQ(parse_duration("PT1H30M")->count(), 5400);
    EXPECT_EQ(parse_duration("7.00:00:00")->count(), 7 * 86400);
    EXPECT_EQ(parse_duration("01:30:00")->count(), 5400);
    for (const char* bad : {"", "P", "PT", "1 hour", "25:00:00", "P1H", "x.01:00:00"}) {
        EXPECT_FALSE(parse_duration(bad).has_value()) << bad;
    }
}

TEST(Validator, CliModeLetsTheCommandLineFillIn) {
    json body = good_job();
    body["properties"].erase("cluster");
    auto& share = body["properties"]["mountVolumes"]["azureFileShares"][0];
    share.erase("accountName");
    share.erase("credentials");
    share["azureFileUrl"] = "https://<AZURE_BATCHAI_STORAGE_ACCOUNT>.file.core.windows.net/data";
    EXPECT_TRUE(check(body, Mode::cli).ok()) << errors_of(check(body, Mode::cli));
    Report rest = check(body, Mode::rest);
    EXPECT_TRUE(has_error_at(rest, "properties.cluster"));
    EXPECT_TRUE(has_error_at(rest, "properties.mountVolumes.azureFileShares[0].credentials"));
}

TEST(Validator, UnknownAndReadOnlyPropertiesAreWarnings) {
    json body = good_job();
    body["properties"]["nodecount"] = 3;  // a typo
    body["properties"]["executionState"] = "running";
    Report r = check(body);
    EXPECT_TRUE(r.ok()) << errors_of(r);
    ASSERT_EQ(r.warnings.size(), 2u);
    EXPECT_EQ(r.warnings[0].path, "properties.executionState");
    EXPECT_EQ(r.warnings[1].path, "properties.nodecount");
}

TEST(Validator, Clusters) {
    json cluster = json::parse(R"({"properties": {"vmSize": "STANDARD_NC6", "vmPriority": "lowpriority",
        "userAccountSettings": {"adminUserName": "me", "adminUserPassword": "p"},
        "scaleSettings": {"autoScale": {"minimumNodeCount": 0, "maximumNodeCount": 4}}}})");
    EXPECT_TRUE(check(cluster, Mode::rest, ResourceKind::cluster).ok());
    json both = cluster;
    both["properties"]["scaleSettings"]["manual"] = {{"targetNodeCount", 1}};
    EXPECT_TRUE(has_error_at(check(both, Mode::rest, ResourceKind::cluster), "properties.scaleSettings"));
    json inverted = cluster;
    inverted["properties"]["scaleSettings"]["autoScale"]["maximumNodeCount"] = -1;
    EXPECT_TRUE(has_error_at(check(inverted, Mode::rest, ResourceKind::cluster),
                             "properties.scaleSettings.autoScale.maximumNodeCount"));
    json priority = cluster;
    priority["properties"]["vmPriority"] = "cheap";
    EXPECT_TRUE(has_error_at(check(priority, Mode::rest, ResourceKind::cluster), "properties.vmPriority"));
    json no_size = cluster;
    no_size["properties"].erase("vmSize");
    EXPECT_TRUE(has_error_at(check(no_size, Mode::rest, ResourceKind::cluster), "properties.vmSize"));
    EXPECT_TRUE(check(no_size, Mode::cli, ResourceKind::cluster).ok());
}

TEST(Validator, MalformedJsonIsOneErrorAtTheRoot) {
    Report r = validate_text("{\"properties\": {", ResourceKind::job, ApiVersion::v2018_05_01, Mode::rest);
    ASSERT_EQ(r.errors.size(), 1u);
    EXPECT_EQ(r.errors[0].path, "$");
    EXPECT_FALSE(validate_text("[]", ResourceKind::job, ApiVersion::v2018_05_01, Mode::rest).ok());
}

TEST(Validator, DeeplyNestedJsonDoesNotCrash) {
    std::string deep = std::string(200000, '[') + std::string(200000, ']');
    EXPECT_FALSE(validate_text(deep, ResourceKind::job, ApiVersion::v2018_05_01, Mode::rest).ok());
    std::string nested_object = "{\"properties\": ";
    for (int i = 0; i < 100000; ++i) nested_object += "{\"a\": ";
    nested_object += "1" + std::string(100000, '}') + "}";
    Report r = validate_text(nested_object, ResourceKind::job, ApiVersion::v2018_05_01, Mode::rest);
    EXPECT_FALSE(r.ok());
}

// Every job, cluster and file-server configuration of shared/reference/jobs validates in CLI
// mode. Classified out: JSON schemas that sit in the corpus (*/schemas/*, and
// history/2017-09-01-preview/job.json). Documentation fragments without the "properties"
// wrapper are validated as the properties they are. Files of the 2017-09-01-preview era use its
// definitions; all others (2018-03-01 flat API included, which the emulator does not serve) use
// 2018-05-01's, so their flat-API leftovers (location, credentialsInfo, toolType) are warnings.
TEST(ValidatorCorpus, EveryReferenceConfigurationPassesInCliMode) {
    std::filesystem::path root = std::filesystem::path(BAI_SOURCE_DIR) / ".." / "shared" / "reference" / "jobs";
    if (!std::filesystem::exists(root)) GTEST_SKIP() << "SKIPPED: no " << root << " in this checkout";
    int checked = 0;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
        std::string path = entry.path().string();
        if (entry.path().extension() != ".json" || path.find("/schemas/") != std::string::npos ||
            path.find("history/2017-09-01-preview/") != std::string::npos) {
            continue;
        }
        std::ifstream in(entry.path());
        std::stringstream text;
        text << in.rdbuf();
        json body = json::parse(text.str());
        if (!body.contains("properties")) body = json{{"properties", body}};
        std::string name = entry.path().filename().string();
        ResourceKind kind = name.find("cluster") != std::string::npos       ? ResourceKind::cluster
                            : name.find("file_server") != std::string::npos ? ResourceKind::file_server
                                                                            : ResourceKind::job;
        ApiVersion version = path.find("2017-09-01-preview") != std::string::npos
                                 ? ApiVersion::v2017_09_01_preview
                                 : ApiVersion::v2018_05_01;
        Report r = validate(body, kind, version, Mode::cli);
        EXPECT_TRUE(r.ok()) << path << "\n" << errors_of(r);
        ++checked;
    }
    EXPECT_GE(checked, 50);
}

TEST(Validator, AKindTheVersionDoesNotHaveIsAnErrorNotACrash) {
    Report r = validate(nlohmann::json{{"location", "eastus"}}, ResourceKind::workspace,
                        ApiVersion::v2017_09_01_preview, Mode::rest);
    ASSERT_EQ(r.errors.size(), 1u);
    EXPECT_EQ(r.errors[0].path, "$");
}

}  // namespace
}  // namespace bai::validation
