// The job engine on its own (no HTTP): documents written straight into the store, the hooks
// called from several threads as the ARM API's worker would, processes really run. Built with
// ThreadSanitizer by tools/test.
#include "emulator/engine/local_engine.h"

#include <gtest/gtest.h>

#include <fstream>
#include <thread>

#include "emulator/engine/declared_workload.h"
#include "emulator/engine/job_run.h"
#include "tests/emulator/engine_fixture.h"

namespace bai::engine {
namespace {

using nlohmann::json;
using testing::kCluster;
using testing::kExperiment;
using testing::kWorkspace;

class LocalEngineTest : public testing::EngineFixture {};

TEST_F(LocalEngineTest, ManyJobsFromSeveralThreadsWithTerminatesAndDeletes) {
    start(3);
    std::vector<std::string> quick, slow;
    std::vector<std::thread> submitters;
    std::mutex ids;
    for (int t = 0; t < 3; ++t) {
        submitters.emplace_back([&, t] {
            for (int i = 0; i < 8; ++i) {
                // (Appends: GCC 12 warns falsely on "literal" + std::string here.)
                std::string name = std::string("j").append(std::to_string(t)).append("-").append(std::to_string(i));
                bool sleeper = i % 4 == 3;
                std::string id = add_job(name, sleeper ? std::string("sleep 600") : std::string("echo ").append(name));
                std::lock_guard guard(ids);
                (sleeper ? slow : quick).push_back(id);
            }
        });
    }
    for (auto& s : submitters) s.join();
    // Stop the sleepers one way or the other while the rest are being scheduled.
    for (size_t i = 0; i < slow.size(); ++i) {
        if (i % 2 == 0) {
            store->atomically([&] { engine->job_terminate(slow[i]); });
        } else {
            auto removed = store->remove_tree(slow[i]);
            engine->job_deleted(removed.at(0));
        }
    }
    for (const std::string& id : quick) {
        ASSERT_TRUE(wait_for([&] { return state(id) == "succeeded"; })) << id << ": " << state(id);
    }
    for (size_t i = 0; i < slow.size(); ++i) {
        if (i % 2 == 0) {
            ASSERT_TRUE(wait_for([&] { return state(slow[i]) == "failed"; })) << slow[i];
            EXPECT_EQ(store->get(slow[i])->body["properties"]["executionInfo"]["errors"][0]["code"], "JobTerminated");
        } else {
            EXPECT_EQ(state(slow[i]), "gone");
        }
    }
    ASSERT_TRUE(wait_for([&] {
        auto c = store->get(kCluster)->body["properties"];
        return c["nodeStateCounts"]["idleNodeCount"] == 3 && c["allocationState"] == "steady";
    }));
    std::string stdout_path = files->share_root("devstoreaccount1", "jobs").string() + "/seg/j1-2/stdouterr/stdout.txt";
    EXPECT_TRUE(std::filesystem::exists(stdout_path));
    EXPECT_EQ(files->get_file("devstoreaccount1", "jobs", "seg/j1-2/stdouterr/stdout.txt").size, 5u);  // "j1-2\n"
}

TEST_F(LocalEngineTest, TheDiskOfAFileServerThatIsGoneIsRemovedAtStart) {
    const std::string server = kWorkspace + "/fileServers/nfs";
    ASSERT_TRUE(store->create(server, kWorkspace, "fileServer", json{{"id", server}, {"name", "nfs"}, {"properties", json::object()}}));
    auto live = dir / ("fileservers/" + std::to_string(store->get(server)->seq));
    auto orphan = dir / "fileservers/999999";
    for (const auto& disk : {live, orphan}) {
        std::filesystem::create_directories(disk / "data");
        std::ofstream(disk / "data/file.txt") << "on the disk";
    }
    start(0);
    EXPECT_TRUE(std::filesystem::exists(live / "data/file.txt"));
    EXPECT_FALSE(std::filesystem::exists(orphan));
}

// A job that takes ten virtual hours (a real process would hold the virtual clock until it
// ended: the clock waits for real processes).
class TenHours : public DeclaredWorkloads {
public:
    std::optional<JobOutcome> play(const std::string&, const WorkloadContext& c) override {
        if (!c.control.sleep_until(c.clock, c.started + std::chrono::hours(10))) {
            return JobOutcome{JobOutcome::Result::cancelled, std::nullopt, "", ""};
        }
        return JobOutcome{JobOutcome::Result::succeeded, 0, "", ""};
    }
    bool plays(const std::string&) const override { return true; }
};

TEST_F(LocalEngineTest, RecordsItsHistoryAndWhereANodeLocalStdoutWent) {
    start(1);
    const std::string id = kExperiment + "/jobs/Local";
    json job{{"id", id},
             {"name", "Local"},
             {"properties",
              {{"cluster", {{"id", kCluster}}},
               {"nodeCount", 1},
               {"executionState", "queued"},
               {"constraints", {{"maxWallClockTime", "P7D"}}},
               {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_TEMP"},
               {"jobOutputDirectoryPathSegment", "seg/Local"},
               {"customToolkitSettings", {{"commandLine", "echo on-the-node"}}}}}};
    ASSERT_TRUE(store->create(id, kExperiment, "job", job));
    engine->job_created(id);
    ASSERT_TRUE(wait_for([&] { return state(id) == "succeeded"; }));
    const std::string key = arm::resource_key(id);
    std::optional<LocalEngine::LocalLogs> logs = engine->stdouterr_directory(key);
    ASSERT_TRUE(logs);
    EXPECT_EQ(logs->anchor.parent_path().parent_path(), dir / "nodes");  // the node's root
    std::ifstream out(logs->anchor / logs->relative / "stdout.txt");
    std::string line;
    std::getline(out, line);
    EXPECT_EQ(line, "on-the-node");
    const json history = engine->history().of_job(key);
    ASSERT_EQ(history.size(), 3u);
    EXPECT_EQ(history[0]["event"], "queued");
    EXPECT_EQ(history[1]["event"], "runs");
    EXPECT_EQ(history[2]["detail"], "succeeded (exit code 0)");
    std::vector<std::string> node_events;
    for (const json& e : engine->history().of_cluster(arm::resource_key(kCluster))) node_events.push_back(e["event"]);
    EXPECT_EQ(node_events, (std::vector<std::string>{"joins", "idle", "runs", "ends"}));
    engine->job_deleted(*store->get(id));
    ASSERT_TRUE(wait_for([&] { return !engine->stdouterr_directory(key); }));
}

TEST_F(LocalEngineTest, MaxWallClockTimeOnAVirtualClock) {
    clock = std::make_unique<VirtualClock>(time::now());
    TenHours workload;
    start(1, clock.get(), &workload);
    std::string id = add_job("long", "workload long", "PT1H");
    ASSERT_TRUE(wait_for([&] { return state(id) == "running"; }));
    clock->advance(std::chrono::minutes(59));
    EXPECT_EQ(state(id), "running");
    clock->advance(std::chrono::minutes(2));
    ASSERT_TRUE(wait_for([&] { return state(id) == "failed"; }));
    EXPECT_EQ(store->get(id)->body["properties"]["executionInfo"]["errors"][0]["code"], "MaxWallClockTimeExceeded");
}

TEST_F(LocalEngineTest, AClusterCreatedAgainWhileItsDeletedNodesFinishStartsFresh) {
    start(1);
    std::string old_job = add_job("old", "sleep 600");
    ASSERT_TRUE(wait_for([&] { return state(old_job) == "running"; }));
    // Deleted and created again at once: the old node is still ending its job.
    auto removed = store->remove_tree(kCluster);
    engine->cluster_deleted(removed.at(0));
    create_cluster(1);
    engine->cluster_created(kCluster);
    ASSERT_TRUE(wait_for([&] { return state(old_job) == "failed"; }));
    EXPECT_EQ(store->get(old_job)->body["properties"]["executionInfo"]["errors"][0]["code"], "ClusterDeleted");
    ASSERT_TRUE(wait_for([&] {
        auto c = store->get(kCluster)->body["properties"];
        return c["nodeStateCounts"]["idleNodeCount"] == 1 && c["allocationState"] == "steady";
    })) << store->get(kCluster)->body.dump();
    std::string new_job = add_job("new", "echo new");
    ASSERT_TRUE(wait_for([&] { return state(new_job) == "succeeded"; })) << state(new_job);
}

}  // namespace
}  // namespace bai::engine
