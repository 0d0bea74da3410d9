// Declared workloads played by the job engine on a virtual clock: no process runs, the job takes
// the workload's virtual time, prints its lines, writes its files, exits with its code; a
// pre-empted attempt is cut short and the requeued job plays it again.
#include "scenarios/replay/workload_player.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "tests/emulator/engine_fixture.h"

namespace bai::scenarios {
namespace {

using nlohmann::json;

class WorkloadPlayerTest : public engine::testing::EngineFixture {
protected:
    void SetUp() override {
        EngineFixture::SetUp();
        Scenario s = parse_scenario(R"(
workload train duration 2h prints "epoch 1" prints "epoch 2" writes $AZ_BATCHAI_OUTPUT_MODEL/model.txt "weights"
workload flaky duration 10m fail-first 1
workload broken duration 1m exit 3
)",
                                    "workloads.scenario");
        player = std::make_unique<WorkloadPlayer>(s.workloads);
        clock = std::make_unique<engine::VirtualClock>(time::now());
    }

    std::string add_workload_job(const std::string& name, const std::string& workload) {
        std::string id = add_job(name, "workload " + workload);
        store->update(id, [](json& body) {
            body["properties"]["outputDirectories"] = json::array(
                {{{"id", "MODEL"}, {"pathPrefix", "$AZ_BATCHAI_MOUNT_ROOT/afs"}}});
            return true;
        });
        return id;
    }

    std::string read(const std::string& relative) {
        std::ifstream in(files->share_root("devstoreaccount1", "jobs") / relative);
        std::stringstream text;
        text << in.rdbuf();
        return text.str();
    }
    std::string job_stdout(const std::string& name) { return read("seg/" + name + "/stdouterr/stdout.txt"); }

    std::unique_ptr<WorkloadPlayer> player;
};

TEST_F(WorkloadPlayerTest, AJobTakesTheWorkloadsVirtualTimeAndLeavesItsOutput) {
    start(1, clock.get(), player.get());
    std::string id = add_workload_job("train", "train");
    ASSERT_TRUE(wait_for([&] { return state(id) == "running" && player->attempts(id) == 1; }));
    clock->advance(std::chrono::minutes(41));  // the first line is due at 2h/3
    ASSERT_TRUE(wait_for([&] { return job_stdout("train") == "epoch 1\n"; }));
    EXPECT_EQ(state(id), "running");  // it cannot end before 2h of virtual time
    clock->advance(std::chrono::minutes(80));
    ASSERT_TRUE(wait_for([&] { return state(id) == "succeeded"; }));
    EXPECT_EQ(job_stdout("train"), "epoch 1\nepoch 2\n");
    EXPECT_EQ(read("seg/train/outputs/model.txt"), "weights");
    EXPECT_EQ(store->get(id)->body["properties"]["executionInfo"]["exitCode"], 0);
}

// What the engine asks before it sets up what processes would need (ssh, node scripts).
TEST_F(WorkloadPlayerTest, ItPlaysTheCommandsThatNameAWorkload) {
    EXPECT_TRUE(player->plays("workload train"));
    EXPECT_TRUE(player->plays("python workload train"));
    EXPECT_TRUE(player->plays("mpirun -np 2 bash -c 'python workload hvd'"));
    EXPECT_TRUE(player->plays("workload undeclared"));  // played: it fails as undeclared
    EXPECT_FALSE(player->plays("echo workload train"));
    EXPECT_FALSE(player->plays("python train.py"));
    EXPECT_FALSE(player->plays("workload"));
}

TEST_F(WorkloadPlayerTest, FirstAttemptsFailAndExitCodesAreTheDeclaredOnes) {
    start(1, clock.get(), player.get());
    std::string flaky = add_workload_job("flaky", "flaky");
    ASSERT_TRUE(wait_for([&] { return player->attempts(flaky) == 1; }));
    clock->advance(std::chrono::minutes(10));
    ASSERT_TRUE(wait_for([&] { return state(flaky) == "failed"; }));
    EXPECT_EQ(store->get(flaky)->body["properties"]["executionInfo"]["exitCode"], 1);
    EXPECT_FALSE(std::filesystem::exists(files->share_root("devstoreaccount1", "jobs") / "seg/flaky/outputs/model.txt"));

    std::string broken = add_workload_job("broken", "broken");
    ASSERT_TRUE(wait_for([&] { return player->attempts(broken) == 1; }));
    clock->advance(std::chrono::minutes(1));
    ASSERT_TRUE(wait_for([&] { return state(broken) == "failed"; }));
    EXPECT_EQ(store->get(broken)->body["properties"]["executionInfo"]["exitCode"], 3);

    std::string undeclared = add_job("undeclared", "workload nothing");
    ASSERT_TRUE(wait_for([&] { return state(undeclared) == "failed"; }));
    EXPECT_EQ(store->get(undeclared)->body["properties"]["executionInfo"]["exitCode"], 127);
}

TEST_F(WorkloadPlayerTest, APreemptedAttemptIsCutShortAndTheRequeuedJobPlaysItAgain) {
    start(1, clock.get(), player.get(), "lowpriority");
    std::string id = add_workload_job("train", "train");
    ASSERT_TRUE(wait_for([&] { return state(id) == "running" && player->attempts(id) == 1; }));
    clock->advance(std::chrono::minutes(30));
    std::string node = engine->nodes()[0].value("nodeId", "");
    ASSERT_TRUE(engine->preempt(node).has_value());
    ASSERT_TRUE(wait_for([&] { return state(id) == "running" && player->attempts(id) == 2; }));
    clock->advance(std::chrono::hours(2));
    ASSERT_TRUE(wait_for([&] { return state(id) == "succeeded"; }));
    EXPECT_EQ(read("seg/train/outputs/model.txt"), "weights");
}

}  // namespace
}  // namespace bai::scenarios
