#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "common/db/database.h"
#include "emulator/arm/arm_request.h"
#include "emulator/arm/batchai_view.h"
#include "emulator/arm/cloud_error.h"
#include "emulator/arm/odata_filter.h"
#include "emulator/arm/operations.h"
#include "emulator/arm/resource_defaults.h"
#include "emulator/arm/resource_store.h"
#include "emulator/arm/resource_view.h"
#include "emulator/arm/router.h"
#include "emulator/arm/usages.h"
#include "tests/common/test_dir.h"

namespace bai::arm {
namespace {

httplib::Request request(const std::string& method, const std::string& path, const std::string& api_version) {
    httplib::Request r;
    r.method = method;
    r.path = path;
    if (!api_version.empty()) r.params.emplace("api-version", api_version);
    r.headers.emplace("Authorization", "Bearer unit-test");
    return r;
}

nlohmann::json error_of(const httplib::Response& res) { return nlohmann::json::parse(res.body)["error"]; }

TEST(ArmRouter, MatchesLiteralsCaseInsensitivelyAndCapturesNames) {
    Router router("https://127.0.0.1:1");
    std::string seen;
    router.add("GET", "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}", Versions::any_dated, "op",
               [&](const ArmRequest&, const Params& p, httplib::Response& res) {
                   seen = p["subscriptionId"] + "|" + p["resourceGroupName"];
                   res.status = 200;
               });
    httplib::Response res;
    router.dispatch(request("GET", "/SUBSCRIPTIONS/s1/resourcegroups/My.Group", "2021-04-01"), res);
    EXPECT_EQ(res.status, 200);
    EXPECT_EQ(seen, "s1|My.Group");
    EXPECT_FALSE(res.get_header_value("x-ms-request-id").empty());
}

TEST(ArmRouter, ApiVersionIsRequiredAndChecked) {
    Router router("https://127.0.0.1:1");
    router.add("GET", "/x/{workspaceName}", Versions::batchai_2018, "op",
               [](const ArmRequest&, const Params&, httplib::Response& res) { res.status = 200; });
    httplib::Response missing, unknown, malformed, ok;
    router.dispatch(request("GET", "/x/ws", ""), missing);
    router.dispatch(request("GET", "/x/ws", "2017-09-01-preview"), unknown);
    router.dispatch(request("GET", "/x/ws", "latest"), malformed);
    router.dispatch(request("GET", "/x/ws", "2018-05-01"), ok);
    EXPECT_EQ(error_of(missing)["code"], "MissingApiVersionParameter");
    EXPECT_EQ(error_of(unknown)["code"], "NoRegisteredProviderFound");
    EXPECT_EQ(error_of(malformed)["code"], "InvalidApiVersionParameter");
    EXPECT_EQ(ok.status, 200);
}

TEST(ArmRouter, NamesFollowTheRulesOfTheirVersion) {
    EXPECT_NO_THROW(check_name("workspaceName", "ws_1-a", "2018-05-01"));
    EXPECT_THROW(check_name("workspaceName", "ws.1", "2018-05-01"), CloudError);
    EXPECT_NO_THROW(check_name("clusterName", "c.1", "2017-09-01-preview"));
    EXPECT_THROW(check_name("jobName", std::string(65, 'j'), "2018-05-01"), CloudError);
    EXPECT_THROW(check_name("jobName", "", "2018-05-01"), CloudError);
    EXPECT_NO_THROW(check_name("resourceGroupName", "rg(1).x", "2021-04-01"));
    EXPECT_THROW(check_name("resourceGroupName", "rg.", "2021-04-01"), CloudError);
    EXPECT_THROW(check_name("accountName", "Upper", "2021-04-01"), CloudError);
    EXPECT_THROW(check_name("accountName", "ab", "2021-04-01"), CloudError);
}

TEST(ArmRouter, UnknownPathIs404AndWrongMethodIs405) {
    Router router("https://127.0.0.1:1");
    router.add("GET", "/a", Versions::any_dated, "op", [](const ArmRequest&, const Params&, httplib::Response&) {});
    httplib::Response unknown, method;
    router.dispatch(request("GET", "/b", "2021-04-01"), unknown);
    router.dispatch(request("DELETE", "/a", "2021-04-01"), method);
    EXPECT_EQ(unknown.status, 404);
    EXPECT_EQ(method.status, 405);
}

TEST(ArmRouter, AHandlerExceptionBecomesA500CloudError) {
    Router router("https://127.0.0.1:1");
    router.add("GET", "/a", Versions::any_dated, "op",
               [](const ArmRequest&, const Params&, httplib::Response&) { throw std::runtime_error("boom"); });
    httplib::Response res;
    router.dispatch(request("GET", "/a", "2021-04-01"), res);
    EXPECT_EQ(res.status, 500);
    EXPECT_EQ(error_of(res)["code"], "InternalServerError");
}

TEST(ArmRouter, RequestsWithoutABearerTokenAre401BeforeRouting) {
    Router router("https://127.0.0.1:1");
    bool ran = false;
    router.add("GET", "/a", Versions::any_dated, "op",
               [&](const ArmRequest&, const Params&, httplib::Response& res) { ran = true; res.status = 200; });
    auto answer = [&](std::optional<std::string> header, const std::string& path = "/a") {
        httplib::Request r = request("GET", path, "2021-04-01");
        r.headers.erase("Authorization");
        if (header) r.headers.emplace("Authorization", *header);
        httplib::Response res;
        router.dispatch(r, res);
        return std::to_string(res.status) + " " + (res.status == 200 ? "" : error_of(res)["code"].get<std::string>());
    };
    EXPECT_EQ(answer(std::nullopt), "401 AuthenticationFailed");
    EXPECT_EQ(answer(""), "401 AuthenticationFailed");
    EXPECT_EQ(answer("Bearer"), "401 AuthenticationFailed");
    EXPECT_EQ(answer("Basic abc="), "401 AuthenticationFailed");
    EXPECT_EQ(answer("Bearer a b"), "401 InvalidAuthenticationToken");
    EXPECT_EQ(answer("Bearer =abc"), "401 InvalidAuthenticationToken");
    EXPECT_EQ(answer(std::nullopt, "/unknown"), "401 AuthenticationFailed");
    EXPECT_FALSE(ran);
    EXPECT_EQ(answer("bearer eyJ0eXAi.eyJhdWQi.c2lnbmF0dXJl=="), "200 ");
    EXPECT_TRUE(ran);
}

TEST(ArmRequestBody, RefusesDepthTypeAndMalformedJson) {
    EXPECT_FALSE(nests_deeper_than(R"({"a":[{"b":"[[[[[[[["}]})", 3));
    EXPECT_TRUE(nests_deeper_than("[[[[", 3));
    EXPECT_FALSE(nests_deeper_than(R"(["\"[[[[[["])", 2));
    httplib::Request http;
    http.body = R"({"a": 1)";
    ArmRequest r = make_request(http, "https://h");
    EXPECT_THROW(r.json_body(), CloudError);
    http.body = R"({"n": 1e999999})";
    EXPECT_THROW(make_request(http, "https://h").json_body(), CloudError);
    http.body = "   ";
    EXPECT_FALSE(make_request(http, "https://h").json_body().has_value());
    http.body = R"({"a": 1})";
    http.headers.emplace("Content-Type", "application/xml");
    EXPECT_THROW(make_request(http, "https://h").json_body(), CloudError);
}

TEST(ArmRequestQuery, NamesAreCaseInsensitiveAndMaxResultsIsBounded) {
    httplib::Request http;
    http.params.emplace("MaxResults", "7");
    EXPECT_EQ(make_request(http, "https://h").max_results(), 7);
    http.params.clear();
    EXPECT_EQ(make_request(http, "https://h").max_results(), 1000);
    http.params.emplace("maxresults", "1001");
    EXPECT_THROW(make_request(http, "https://h").max_results(), CloudError);
}

TEST(ArmUsages, FamiliesAndEntriesAreTheServices) {
    EXPECT_EQ(bai::arm::vm_family("STANDARD_D1"), "D");
    EXPECT_EQ(bai::arm::vm_family("Standard_D2_v2"), "Dv2");
    EXPECT_EQ(bai::arm::vm_family("Standard_NC6s_v2"), "NCv2");
    EXPECT_EQ(bai::arm::vm_family("standard_nc24rs_v3"), "NCv3");
    EXPECT_EQ(bai::arm::vm_family("Standard_NV6"), "NV");
    EXPECT_EQ(bai::arm::vm_family("_"), "");
    nlohmann::json cores{{"dedicated", 6},
                         {"lowPriority", 1},
                         {"byVmSize", {{"Standard_NC6", {{"dedicated", 6}}}, {"STANDARD_D1", {{"lowPriority", 1}}}}}};
    nlohmann::json items = bai::arm::batchai_usages(2, cores);
    ASSERT_EQ(items.size(), 17u);
    EXPECT_EQ(items[0]["name"]["value"], "Clusters");
    EXPECT_EQ(items[0]["currentValue"], 2);
    EXPECT_EQ(items[0]["limit"], 20);
    EXPECT_EQ(items[1]["name"]["value"], "Total Cluster Dedicated Regional vCPUs");
    EXPECT_EQ(items[1]["currentValue"], 6);
    EXPECT_EQ(items[4]["name"]["value"], "Standard NC Family Cluster Dedicated vCPUs");
    EXPECT_EQ(items[4]["currentValue"], 6);
    EXPECT_EQ(items[5]["limit"], 0);  // NCv2: no quota for a new subscription
    EXPECT_EQ(items[9]["name"]["value"], "Total Cluster LowPriority Regional vCPUs");
    EXPECT_EQ(items[9]["name"]["localizedValue"], "Total Cluster Low Priority Regional vCPUs");
    EXPECT_EQ(items[10]["name"]["value"], "Standard D Family Cluster LowPriority vCPUs");
    EXPECT_EQ(items[10]["currentValue"], 1);
    for (const auto& item : items) EXPECT_EQ(item["unit"], "Count");
}

TEST(ArmUsages, The2021ModelListsEveryFamilyWithTheEmulatorsUse) {
    nlohmann::json cores{{"dedicated", 6},
                         {"lowPriority", 2},
                         {"byVmSize", {{"Standard_NC6", {{"dedicated", 6}}}, {"Standard_D2_v3", {{"lowPriority", 2}}}}}};
    nlohmann::json items = bai::arm::batchai_usages_2021(cores);
    ASSERT_EQ(items.size(), 55u);
    EXPECT_EQ(items[0]["name"]["value"], "Total Cluster vCPUs");
    EXPECT_EQ(items[0]["currentValue"], 8);
    EXPECT_EQ(items[0]["limit"], 200);
    EXPECT_EQ(items[1]["name"]["value"], "Total Cluster Dedicated Regional vCPUs");
    EXPECT_EQ(items[1]["currentValue"], 6);
    EXPECT_EQ(items[8]["name"]["value"], "Standard NC Family Cluster Dedicated vCPUs");
    EXPECT_EQ(items[8]["currentValue"], 6);
    EXPECT_EQ(items[8]["limit"], 24);
    EXPECT_EQ(items[28]["name"]["value"], "Total Cluster LowPriority Regional vCPUs");
    EXPECT_EQ(items[28]["name"]["localizedValue"], "Total Cluster Low Priority Regional vCPUs");
    EXPECT_EQ(items[28]["currentValue"], 2);
    EXPECT_EQ(items[31]["name"]["value"], "Standard Dv3 Family Cluster LowPriority vCPUs");
    EXPECT_EQ(items[31]["name"]["localizedValue"], "Standard Dv3 Family Cluster LowPriority vCPUs");
    EXPECT_EQ(items[31]["currentValue"], 2);
    EXPECT_EQ(items[31]["limit"], -1);
    EXPECT_EQ(items[54]["name"]["value"], "Standard HBv3 Family Cluster LowPriority vCPUs");
    for (const auto& item : items) EXPECT_EQ(item["unit"], "Count");
}

TEST(ArmDefaults, DurationsAreWrittenAsTheServiceDid) {
    EXPECT_EQ(iso_duration(std::chrono::hours(24 * 7)), "P7D");
    EXPECT_EQ(iso_duration(std::chrono::seconds(5400)), "PT1H30M");
    EXPECT_EQ(iso_duration(std::chrono::seconds(90061)), "P1DT1H1M1S");
    EXPECT_EQ(iso_duration(std::chrono::seconds(0)), "PT0S");
}

TEST(ArmDefaults, JobDefaultsFillWhatTheServiceFilled) {
    nlohmann::json p = {{"nodeCount", 3}, {"horovodSettings", {{"pythonScriptFilePath", "t.py"}}},
                        {"constraints", {{"maxWallClockTime", "1.02:00:00"}}}};
    stamp_new(p, "creating");
    fill_job_defaults(p, "seg");
    EXPECT_EQ(p["toolType"], "horovod");
    EXPECT_EQ(p["horovodSettings"]["processCount"], 3);
    EXPECT_EQ(p["schedulingPriority"], "normal");
    EXPECT_EQ(p["constraints"]["maxWallClockTime"], "P1DT2H");
    EXPECT_EQ(p["executionState"], "queued");
    EXPECT_EQ(p["jobOutputDirectoryPathSegment"], "seg");
    EXPECT_FALSE(p["constraints"].contains("maxAttempts"));  // the flat API's era had none
    nlohmann::json latest = {{"nodeCount", 1}, {"constraints", {{"maxAttempts", 1}}}};
    stamp_new(latest, "creating");
    fill_job_defaults(latest, "seg", Era::latest);
    EXPECT_EQ(latest["constraints"]["maxAttempts"], 5);  // the service's, never a client's
}

TEST(ArmDefaults, ClusterImageIsTheEras) {
    nlohmann::json latest = {{"vmSize", "Standard_D1"}};
    stamp_new(latest, "creating");
    fill_cluster_defaults(latest, "suffix", Era::latest);
    EXPECT_EQ(latest["virtualMachineConfiguration"]["imageReference"],
              (nlohmann::json{{"publisher", "microsoft-dsvm"}, {"offer", "amlcompute"}, {"sku", "runtime-gen1-ubuntu18"},
                              {"version", "latest"}}));
    nlohmann::json early = {{"vmSize", "Standard_D1"}};
    stamp_new(early, "creating");
    fill_cluster_defaults(early, "suffix");
    EXPECT_EQ(early["virtualMachineConfiguration"]["imageReference"]["offer"], "UbuntuServer");
}

TEST(ArmView, The2018ApiShowsTheFieldsThe2021ServiceDerived) {
    StoredResource cluster;
    cluster.etag = "\"0x1\"";
    cluster.body = {{"_x", 1}, {"properties", {{"virtualMachineConfiguration", {{"imageReference", {{"offer", "o"}}}}}}}};
    nlohmann::json c = cluster_view(cluster);
    EXPECT_EQ(c["etag"], "\"0x1\"");
    EXPECT_EQ(c["properties"]["virtualMachineConfiguration"]["imageReference"]["minVersion"], "");
    EXPECT_FALSE(c.contains("_x"));

    StoredResource job;
    job.body = {{kJobVmSize, "STANDARD_NC12"}, {"properties", {{"nodeCount", 2}, {"executionState", "queued"}}}};
    nlohmann::json queued = job_view(job);
    EXPECT_EQ(queued["properties"]["coreCountPerNode"], 0);
    EXPECT_FALSE(queued["properties"].contains("vmSize"));
    EXPECT_FALSE(queued.contains(kJobVmSize));
    job.body["properties"]["executionState"] = "succeeded";
    job.body["properties"]["executionInfo"] = {{"startTime", "2021-02-22T10:26:57Z"}, {"endTime", "2021-02-22T10:32:52Z"}};
    nlohmann::json ran = job_view(job);
    EXPECT_EQ(ran["properties"]["coreCountPerNode"], 12);
    EXPECT_EQ(ran["properties"]["vmSize"], "STANDARD_NC12");
    // 355 s on 2 nodes, as the service counted (recorded: 0.0986 h on one node).
    EXPECT_DOUBLE_EQ(ran["properties"]["executionInfo"]["totalJobNodeHours"].get<double>(), 2 * 355.0 / 3600);
    job.body["properties"]["executionState"] = "running";
    job.body["properties"]["executionInfo"].erase("endTime");
    EXPECT_EQ(job_view(job)["properties"]["executionInfo"]["totalJobNodeHours"].get<double>(), 0.0);
}

TEST(ArmView, SecretsAndInternalFieldsAreNeverReturned) {
    nlohmann::json stored = {
        {"_keys", {{"key1", "k"}}},
        {"properties",
         {{"secrets", {{{"name", "S"}, {"value", "v"}}}},
          {"environmentVariables", {{{"name", "E"}, {"value", "visible"}}}},
          {"userAccountSettings", {{"adminUserName", "u"}, {"adminUserPassword", "p"}}},
          {"mountVolumes", {{"azureFileShares", {{{"credentials", {{"accountKey", "k"}}}}}}}}}}};
    nlohmann::json view = redacted(stored);
    EXPECT_FALSE(view.contains("_keys"));
    EXPECT_FALSE(view["properties"]["secrets"][0].contains("value"));
    EXPECT_EQ(view["properties"]["environmentVariables"][0]["value"], "visible");
    EXPECT_FALSE(view["properties"]["userAccountSettings"].contains("adminUserPassword"));
    EXPECT_EQ(view["properties"]["mountVolumes"]["azureFileShares"][0]["credentials"], nlohmann::json::object());
}

class ArmStoreTest : public ::testing::Test {
protected:
    void SetUp() override {
        db_ = db::Database::open(dir_ / "state.db");
        ResourceStore::migrate(*db_);
        store_ = std::make_unique<ResourceStore>(*db_);
    }
    bai::testing::TestDir dir_;
    std::unique_ptr<db::Database> db_;
    std::unique_ptr<ResourceStore> store_;
};

TEST_F(ArmStoreTest, IdsAreCaseInsensitiveAndCreateRefusesDuplicates) {
    EXPECT_TRUE(store_->create("/s/A/ws/One", "/s/A", "workspace", {{"id", "/s/A/ws/One"}}));
    EXPECT_FALSE(store_->create("/S/a/WS/one", "/s/A", "workspace", {{"id", "other"}}));
    auto found = store_->get("/s/a/ws/ONE");
    ASSERT_TRUE(found);
    EXPECT_EQ(found->body["id"], "/s/A/ws/One");
}

TEST_F(ArmStoreTest, UpdateChangesTheEtagOnlyWhenTheBodyChanges) {
    store_->create("/r", "/", "group", {{"v", 1}});
    std::string etag = store_->get("/r")->etag;
    store_->update("/r", [](nlohmann::json&) { return false; });
    EXPECT_EQ(store_->get("/r")->etag, etag);
    store_->update("/r", [](nlohmann::json& b) {
        b["v"] = 2;
        return true;
    });
    EXPECT_NE(store_->get("/r")->etag, etag);
    EXPECT_EQ(store_->get("/r")->body["v"], 2);
    EXPECT_FALSE(store_->update("/missing", [](nlohmann::json&) { return true; }));
}

TEST_F(ArmStoreTest, RemoveTreeTakesChildrenButNotSiblingsWithTheSamePrefix) {
    store_->create("/w/a", "/w", "workspace", {});
    store_->create("/w/a/e", "/w/a", "experiment", {});
    store_->create("/w/a/e/j", "/w/a/e", "job", {});
    store_->create("/w/ab", "/w", "workspace", {});
    EXPECT_EQ(store_->remove_tree("/w/a").size(), 3u);
    EXPECT_FALSE(store_->get("/w/a/e/j"));
    EXPECT_TRUE(store_->get("/w/ab"));
}

TEST_F(ArmStoreTest, PagesContinueInCreationOrder) {
    for (int i = 0; i < 5; ++i) store_->create("/p/c" + std::to_string(i), "/p", "experiment", {{"i", i}});
    Page first = store_->children("/p", "experiment", 0, 2);
    ASSERT_EQ(first.items.size(), 2u);
    ASSERT_TRUE(first.next_after);
    Page second = store_->children("/p", "experiment", *first.next_after, 2);
    Page third = store_->children("/p", "experiment", *second.next_after, 2);
    EXPECT_EQ(third.items.size(), 1u);
    EXPECT_FALSE(third.next_after);
    EXPECT_EQ(third.items[0].body["i"], 4);
    EXPECT_EQ(store_->under("/p", "experiment", 0, 100).items.size(), 5u);
    EXPECT_EQ(store_->under("/q", "experiment", 0, 100).items.size(), 0u);
}

TEST_F(ArmStoreTest, TypeOfReadsOnlyTheType) {
    store_->create("/g/c", "/g", "cluster", {{"id", "/g/c"}});
    EXPECT_EQ(store_->type_of("/G/C"), "cluster");
    EXPECT_FALSE(store_->type_of("/g/missing"));
}

TEST_F(ArmStoreTest, AtomicallyRollsBackEverythingOnAnException) {
    EXPECT_THROW(store_->atomically([&] {
        store_->create("/g/a", "/g", "workspace", {});
        store_->create("/g/b", "/g", "workspace", {});
        throw std::runtime_error("abort");
    }),
                 std::runtime_error);
    EXPECT_FALSE(store_->get("/g/a"));
    EXPECT_FALSE(store_->get("/g/b"));
}

// A data directory written before seq became the rowid (schema version 2) keeps its resources,
// their order and their continuation.
TEST(ArmOperations, FinishedOnesAreForgottenAfterTheirTimeInProgressOnesNever) {
    bai::testing::TestDir dir;
    auto db = db::Database::open(dir / "state.db");
    OperationTracker::migrate(*db);
    OperationTracker quick(*db, std::chrono::milliseconds(0));
    quick.start([](const Operation&) {});
    Operation done = quick.begin(Operation{"", "delete", "/r/a", "", "Microsoft.BatchAI", "s", "eastus", "2018-05-01"});
    for (int i = 0; i < 500 && !(quick.get(done.id) && quick.get(done.id)->status == "Succeeded"); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    quick.stop();
    ASSERT_EQ(quick.get(done.id)->status, "Succeeded");
    OperationTracker slow(*db, std::chrono::hours(1));
    slow.start([](const Operation&) {});
    Operation waiting = slow.begin(Operation{"", "delete", "/r/b", "", "Microsoft.BatchAI", "s", "eastus", "2018-05-01"});
    EXPECT_EQ(slow.forget_finished_before(time::now() - std::chrono::hours(1)), 0u);  // too recent
    EXPECT_EQ(slow.forget_finished_before(time::now() + std::chrono::seconds(1)), 1u);
    EXPECT_FALSE(slow.get(done.id));
    EXPECT_EQ(slow.get(waiting.id)->status, "InProgress");
    slow.stop();
}

// A replay settles on the operations: wait_idle returns once the worker has completed them (at
// once, not at a poll's next turn), and says false where one is still due at the deadline.
TEST(ArmOperations, WaitIdleReturnsWhenTheWorkerHasCompletedThem) {
    bai::testing::TestDir dir;
    auto db = db::Database::open(dir / "state.db");
    OperationTracker::migrate(*db);
    OperationTracker quick(*db, std::chrono::milliseconds(0));
    std::atomic<int> completed{0};
    quick.start([&](const Operation&) { ++completed; });
    EXPECT_TRUE(quick.wait_idle(std::chrono::steady_clock::now()));
    const auto started = std::chrono::steady_clock::now();
    for (int i = 0; i < 20; ++i) {
        Operation op = quick.begin(Operation{"", "delete", "/r/" + std::to_string(i), "", "Microsoft.BatchAI", "s", "eastus", "2018-05-01"});
        ASSERT_TRUE(quick.wait_idle(std::chrono::steady_clock::now() + std::chrono::seconds(10)));
        EXPECT_EQ(completed.load(), i + 1);
        EXPECT_EQ(quick.get(op.id)->status, "Succeeded");
    }
    // Woken by the worker, not by the deadline (20 of them would be 200 s).
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(30));
    quick.stop();
    OperationTracker slow(*db, std::chrono::hours(1));
    slow.start([](const Operation&) {});
    slow.begin(Operation{"", "delete", "/r/late", "", "Microsoft.BatchAI", "s", "eastus", "2018-05-01"});
    EXPECT_FALSE(slow.wait_idle(std::chrono::steady_clock::now() + std::chrono::milliseconds(50)));
    slow.stop();
}

TEST(ArmODataFilter, ComparisonsFunctionsAndLogic) {
    const nlohmann::json job = {{"id", "/s/j1"}, {"name", "j1"}, {"location", "eastus"},
                                {"properties", {{"provisioningState", "Succeeded"}, {"priority", 2}, {"tags", {{"team", "vision"}}}}}};
    auto holds = [&](const std::string& filter) { return parse_odata_filter(filter)(job); };
    EXPECT_TRUE(holds("name eq 'j1'"));
    EXPECT_TRUE(holds("properties/provisioningState eq 'succeeded'"));  // strings without regard to case
    EXPECT_FALSE(holds("properties/provisioningState ne 'Succeeded'"));
    EXPECT_TRUE(holds("properties/priority gt 1 and properties/priority le 2"));
    EXPECT_TRUE(holds("name eq 'x' or (location eq 'EastUS' and not (name eq 'j2'))"));
    EXPECT_TRUE(holds("startswith(name, 'j') and endswith(location,'us') and contains(properties/tags/team, 'isi')"));
    EXPECT_FALSE(holds("properties/missing eq 'x'"));
    EXPECT_TRUE(holds("properties/missing eq null"));
    EXPECT_FALSE(holds("name gt 3"));  // a string and a number: not ordered
    EXPECT_TRUE(parse_odata_filter("name eq 'it''s'")({{"name", "it's"}}));
    for (const char* bad : {"", "name", "name eq", "name like 'x'", "(name eq 'x'", "name eq 'open", "startswith(name 'x')",
                            "name eq 'x' and", "name eq 'x' extra"}) {
        EXPECT_THROW(parse_odata_filter(bad), FilterError) << bad;
    }
    try {
        parse_odata_filter("name eq");
    } catch (const FilterError& e) {
        EXPECT_NE(std::string(e.what()).find("position 8"), std::string::npos) << e.what();
    }
    EXPECT_THROW(parse_odata_filter(std::string(10000, '(') + "name eq 'x'" + std::string(10000, ')')), FilterError);
    EXPECT_TRUE(parse_odata_filter(std::string(60, '(') + "name eq 'j1'" + std::string(60, ')'))(job));
    EXPECT_EQ(select_paths(job, "name, properties/priority"),
              (nlohmann::json{{"id", "/s/j1"}, {"name", "j1"}, {"properties", {{"priority", 2}}}}));
    EXPECT_THROW(select_paths(job, "name,,location"), FilterError);
}

TEST(ArmStoreMigration, ResourcesOfSchemaTwoSurvive) {
    bai::testing::TestDir dir;
    auto db = db::Database::open(dir / "state.db");
    db->exec(R"sql(
CREATE TABLE arm_resources(key TEXT PRIMARY KEY, parent_key TEXT NOT NULL, type TEXT NOT NULL, body TEXT NOT NULL,
  etag TEXT NOT NULL, modified_ticks INTEGER NOT NULL, seq INTEGER NOT NULL);
CREATE INDEX arm_resources_by_parent ON arm_resources(parent_key, type, seq);
CREATE INDEX arm_resources_by_type ON arm_resources(type, seq);
CREATE INDEX arm_resources_by_seq ON arm_resources(seq);
INSERT INTO arm_resources VALUES ('/p/b', '/p', 'experiment', '{"n":"b"}', '"0x1"', 1, 7);
INSERT INTO arm_resources VALUES ('/p/a', '/p', 'experiment', '{"n":"a"}', '"0x2"', 2, 9);
INSERT INTO schema_migrations VALUES ('arm', 2, 'then');
)sql");
    ResourceStore::migrate(*db);
    ResourceStore store(*db);
    Page page = store.children("/p", "experiment", 0, 1);
    ASSERT_EQ(page.items.size(), 1u);
    EXPECT_EQ(page.items[0].body["n"], "b");
    EXPECT_EQ(page.next_after, 7);
    EXPECT_EQ(store.children("/p", "experiment", 7, 10).items.at(0).body["n"], "a");
    EXPECT_EQ(store.get("/p/a")->etag, "\"0x2\"");
    EXPECT_TRUE(store.create("/p/c", "/p", "experiment", {{"n", "c"}}));
    EXPECT_EQ(store.get("/p/c")->seq, 10);
}

}  // namespace
}  // namespace bai::arm
