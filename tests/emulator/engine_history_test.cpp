// The engine's history for the portal: a cluster's node events, a job's own events, bounded.
#include <gtest/gtest.h>

#include "emulator/engine/engine_history.h"

namespace bai::engine {
namespace {

TEST(EngineHistory, SeparatesAClustersNodeEventsFromAJobsOwn) {
    EngineHistory history;
    history.record({"t1", "c1", "n1", "", "", "joins", ""});
    history.record({"t2", "c1", "", "j1", "/J1", "queued", ""});
    history.record({"t3", "c1", "n1", "j1", "/J1", "runs", ""});
    history.record({"t3", "c1", "", "j1", "/J1", "runs", "on n1"});
    history.record({"t4", "c2", "n9", "", "", "joins", ""});
    history.record({"t5", "c1", "n1", "j1", "/J1", "ends", "succeeded (exit code 0)"});
    history.record({"t5", "c1", "", "j1", "/J1", "ends", "succeeded (exit code 0)"});
    const nlohmann::json cluster = history.of_cluster("c1");
    ASSERT_EQ(cluster.size(), 3u);
    EXPECT_EQ(cluster[0], (nlohmann::json{{"time", "t1"}, {"event", "joins"}, {"node", "n1"}}));
    EXPECT_EQ(cluster[1]["jobId"], "/J1");
    EXPECT_EQ(cluster[2]["detail"], "succeeded (exit code 0)");
    const nlohmann::json job = history.of_job("j1");
    ASSERT_EQ(job.size(), 3u);
    EXPECT_EQ(job[0]["event"], "queued");
    EXPECT_EQ(job[1]["detail"], "on n1");
    EXPECT_FALSE(job[1].contains("node"));
    EXPECT_TRUE(history.of_cluster("c3").empty());
    EXPECT_TRUE(history.of_job("j2").empty());
}

TEST(EngineHistory, KeepsTheNewestEventsWithinItsCapacity) {
    EngineHistory history(3);
    for (int i = 0; i < 5; ++i) history.record({"t" + std::to_string(i), "c", "n", "", "", "idle", ""});
    const nlohmann::json kept = history.of_cluster("c");
    ASSERT_EQ(kept.size(), 3u);
    EXPECT_EQ(kept[0]["time"], "t2");
    EXPECT_EQ(kept[2]["time"], "t4");
    const nlohmann::json newest = history.of_cluster("c", 2);  // the newest two, oldest first
    ASSERT_EQ(newest.size(), 2u);
    EXPECT_EQ(newest[0]["time"], "t3");
    EXPECT_EQ(newest[1]["time"], "t4");
}

}  // namespace
}  // namespace bai::engine
