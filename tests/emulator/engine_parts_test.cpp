// The engine's small parts: shell words, the job environment, scheduling decisions, the clock,
// the diagnosis archive.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <iterator>
#include <optional>
#include <thread>

#include <thread>

#include "emulator/engine/clock.h"
#include "emulator/engine/diagnosis_archive.h"
#include "emulator/engine/job_environment.h"
#include "emulator/engine/scheduling.h"
#include "emulator/engine/shell_words.h"
#include "tests/common/test_dir.h"

namespace bai::engine {
namespace {

using nlohmann::json;

TEST(ShellWords, QuoteSurvivesTheShell) {
    EXPECT_EQ(shell_quote("plain"), "'plain'");
    EXPECT_EQ(shell_quote("it's $X"), "'it'\\''s $X'");
    EXPECT_EQ(shell_quote(""), "''");
}

TEST(ShellWords, ExpandsNamesAsTheShellDoes) {
    Environment env{{"ROOT", "/mnt"}, {"A_1", "x"}};
    EXPECT_EQ(expand_variables("$ROOT/afs", env), "/mnt/afs");
    EXPECT_EQ(expand_variables("${ROOT}x/$A_1.txt", env), "/mntx/x.txt");
    EXPECT_EQ(expand_variables("$UNSET/a", env), "/a");
    EXPECT_EQ(expand_variables("cost $5 and $", env), "cost $5 and $");
    EXPECT_EQ(expand_variables("${", env), "${");
    EXPECT_EQ(expand_variables("${ROOT", env), "${ROOT");
}

EnvironmentInputs inputs(const json& properties, NodeGpus gpus = {}) {
    return {properties, {"/n/mounts", "/n/jobs/j/mounts", "/n/jobs", "/n/jobs/j", "/n/jobs/j/shared", "/n/jobs/j/hostfile"},
            {"127.0.1.1", "127.0.1.2"}, std::move(gpus)};
}

TEST(JobEnvironment, ServiceVariablesPathsAndUserVariables) {
    json p{{"jobOutputDirectoryPathSegment", "sub/rg/workspaces/w/experiments/e/jobs/j/u"},
           {"stdOutErrPathPrefix", "$AZ_BATCHAI_MOUNT_ROOT/afs/"},
           {"inputDirectories", {{{"id", "DATA"}, {"path", "$AZ_BATCHAI_MOUNT_ROOT/afs/data"}}}},
           {"outputDirectories", {{{"id", "MODEL"}, {"pathPrefix", "${AZ_BATCHAI_MOUNT_ROOT}/afs"}, {"pathSuffix", "/models/"}},
                                  {{"id", "LOGS"}, {"pathPrefix", "$AZ_BATCHAI_JOB_TEMP"}}}},
           {"environmentVariables", {{{"name", "MODE"}, {"value", "fast"}}}},
           {"secrets", {{{"name", "TOKEN"}, {"value", "s"}}, {{"name", "VAULT"}, {"valueSecretReference", json::object()}}}}};
    Environment env = job_environment(inputs(p));
    EXPECT_EQ(env.at("AZ_BATCHAI_MOUNT_ROOT"), "/n/mounts");
    EXPECT_EQ(env.at("AZ_BATCHAI_JOB_TEMP"), "/n/jobs/j");
    EXPECT_EQ(env.at("AZ_BATCHAI_MPI_HOST_FILE"), "/n/jobs/j/hostfile");
    EXPECT_EQ(env.at("AZ_BATCH_HOST_LIST"), "127.0.1.1,127.0.1.2");
    EXPECT_EQ(env.at("AZ_BATCHAI_STDOUTERR_DIR"), "/n/mounts/afs/sub/rg/workspaces/w/experiments/e/jobs/j/u/stdouterr");
    EXPECT_EQ(env.at("AZ_BATCHAI_INPUT_DATA"), "/n/mounts/afs/data");
    EXPECT_EQ(env.at("AZ_BATCHAI_OUTPUT_MODEL"), "/n/mounts/afs/sub/rg/workspaces/w/experiments/e/jobs/j/u/outputs/models");
    EXPECT_EQ(env.at("AZ_BATCHAI_OUTPUT_LOGS"), "/n/jobs/j/sub/rg/workspaces/w/experiments/e/jobs/j/u/outputs");
    EXPECT_EQ(env.at("MODE"), "fast");
    EXPECT_EQ(env.at("TOKEN"), "s");
    EXPECT_EQ(env.at("VAULT"), "");
}

TEST(JobEnvironment, GpusByUuidOnTheHostFromZeroWhenIsolated) {
    Environment host = job_environment(inputs(json::object(), {{"GPU-a", "GPU-b"}, false}));
    EXPECT_EQ(host.at("CUDA_VISIBLE_DEVICES"), "GPU-a,GPU-b");
    EXPECT_EQ(host.at("NVIDIA_VISIBLE_DEVICES"), "GPU-a,GPU-b");
    EXPECT_EQ(host.at("AZ_BATCHAI_NUM_GPUS"), "2");
    EXPECT_EQ(host.at("CUDA_DEVICE_ORDER"), "PCI_BUS_ID");
    Environment isolated = job_environment(inputs(json::object(), {{"GPU-a", "GPU-b"}, true}));
    EXPECT_EQ(isolated.at("CUDA_VISIBLE_DEVICES"), "0,1");
    Environment none = job_environment(inputs(json::object()));
    EXPECT_EQ(none.at("CUDA_VISIBLE_DEVICES"), "");
    EXPECT_EQ(none.at("NVIDIA_VISIBLE_DEVICES"), "none");
    EXPECT_EQ(none.at("AZ_BATCHAI_NUM_GPUS"), "0");
}

TEST(Scheduling, PriorityThenArrival) {
    EXPECT_LT(priority_rank("low"), priority_rank("normal"));
    EXPECT_LT(priority_rank("Normal"), priority_rank("HIGH"));
    EXPECT_EQ(priority_rank(json(-2000)), -1000);
    QueuedJob early{"a", "a", 0, 1, 1}, late_high{"b", "b", 500, 2, 1}, late{"c", "c", 0, 3, 1};
    EXPECT_TRUE(runs_before(late_high, early));
    EXPECT_TRUE(runs_before(early, late));
    EXPECT_FALSE(runs_before(late, early));
}

TEST(Scheduling, GangInOrderWithoutBackfillExceptForJobsTooBigForever) {
    std::vector<QueuedJob> queue{{"a", "a", 0, 1, 2}, {"b", "b", 0, 2, 1}, {"c", "c", 0, 3, 1}};
    EXPECT_EQ(jobs_to_start(queue, 3, 4), (std::vector<size_t>{0, 1}));
    EXPECT_EQ(jobs_to_start(queue, 1, 4), (std::vector<size_t>{}));  // a waits and holds b, c back
    std::vector<QueuedJob> with_giant{{"g", "g", 0, 1, 9}, {"b", "b", 0, 2, 1}};
    EXPECT_EQ(jobs_to_start(with_giant, 1, 4), (std::vector<size_t>{1}));
}

TEST(Scheduling, AutoScaleFollowsDemandAndShrinksWhenIdleLongEnough) {
    AutoScale bounds{0, 3, 0};
    EXPECT_EQ(autoscale_target(bounds, 1, 0, false), 1);
    EXPECT_EQ(autoscale_target(bounds, 5, 1, false), 3);
    EXPECT_EQ(autoscale_target(bounds, 1, 3, false), 3);  // busy: no shrinking
    EXPECT_EQ(autoscale_target(bounds, 0, 2, false), 2);
    EXPECT_EQ(autoscale_target(bounds, 0, 2, true), 0);
    EXPECT_EQ(autoscale_target({1, 3, 2}, 0, 2, true), 1);
}

TEST(Scheduling, ShrinkTakesUnusableThenPreparingThenIdleThenRunning) {
    std::vector<NodeState> nodes{NodeState::running, NodeState::idle, NodeState::unusable, NodeState::idle,
                                 NodeState::preparing};
    EXPECT_EQ(nodes_to_remove(nodes, 3), (std::vector<size_t>{2, 4, 3}));
    EXPECT_EQ(nodes_to_remove(nodes, 5), (std::vector<size_t>{2, 4, 3, 1, 0}));
}

TEST(VirtualClock, WaitersWakeWhenTimeReachesTheirDeadline) {
    VirtualClock clock(time::from_ticks(0));
    std::mutex mutex;
    std::condition_variable cv;
    bool woke = false;
    std::thread waiter([&] {
        std::unique_lock lock(mutex);
        while (clock.now() < time::from_ticks(10'000'000)) clock.wait_until(lock, cv, time::from_ticks(10'000'000));
        woke = true;
    });
    clock.advance(std::chrono::milliseconds(500));
    clock.advance(std::chrono::milliseconds(500));
    waiter.join();
    EXPECT_TRUE(woke);
    EXPECT_EQ(clock.now(), time::from_ticks(10'000'000));
}


// Participants that all wake at the same instant run one at a time, in an order fixed by the seed.
// The first one sleeps `earlier_sleeps` times on the way (as an event loop woken by posts does).
std::vector<int> turn_order(std::uint64_t seed, int& most_at_once, int earlier_sleeps = 0) {
    VirtualClock clock(time::from_ticks(0), seed);
    std::mutex mutex;
    std::condition_variable cv;
    std::vector<int> order;
    std::atomic<int> active{0};
    most_at_once = 0;
    std::vector<std::thread> threads;
    // Spawned while the spawner holds a turn, as the engine thread does: none starts before all are admitted.
    std::optional<Participation> spawner(clock);
    spawner->begin();
    for (int i = 0; i < 6; ++i) {
        threads.emplace_back([&, i, turn = Participation(clock)]() mutable {
            turn.begin();
            std::unique_lock lock(mutex);
            for (int k = 1; i == 0 && k <= earlier_sleeps; ++k) clock.wait_until(lock, cv, time::from_ticks(k * 1000));
            while (clock.now() < time::from_ticks(10'000'000)) clock.wait_until(lock, cv, time::from_ticks(10'000'000));
            int now_active = ++active;
            most_at_once = std::max(most_at_once, now_active);
            order.push_back(i);
            lock.unlock();
            std::this_thread::sleep_for(std::chrono::milliseconds(1));  // a chance to overlap, were turns not taken
            --active;
        });
    }
    spawner.reset();
    EXPECT_TRUE(clock.advance(std::chrono::seconds(1), std::chrono::seconds(30)));
    for (auto& t : threads) t.join();
    return order;
}

TEST(VirtualClock, ParticipantsDueTogetherRunOneAtATimeInTheSeedsOrder) {
    int most = 0;
    std::vector<int> first = turn_order(42, most);
    EXPECT_EQ(most, 1);
    EXPECT_EQ(first.size(), 6u);
    for (int run = 0; run < 3; ++run) EXPECT_EQ(turn_order(42, most), first);
    // Seed 0 keeps the order in which they were admitted; other seeds permute it.
    std::vector<int> unseeded = turn_order(0, most);
    std::vector<int> other = turn_order(7, most);
    std::sort(other.begin(), other.end());
    EXPECT_EQ(other, (std::vector<int>{0, 1, 2, 3, 4, 5}));
    EXPECT_TRUE(turn_order(42, most) != unseeded || turn_order(7, most) != unseeded);
}

TEST(VirtualClock, HowOftenAParticipantSleptBeforeDoesNotReorderTheOnesDueTogether) {
    int most = 0;
    for (std::uint64_t seed : {5, 42, 7}) {
        std::vector<int> order = turn_order(seed, most);
        for (int sleeps : {1, 2, 3}) EXPECT_EQ(turn_order(seed, most, sleeps), order) << "seed " << seed;
    }
}

TEST(VirtualClock, ItIsNotSettledWhileAParticipantRuns) {
    VirtualClock clock(time::from_ticks(0));
    std::atomic<bool> release{false};
    std::thread participant([&, turn = Participation(clock)]() mutable {
        turn.begin();
        while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));  // a real process
    });
    EXPECT_FALSE(clock.settle(std::chrono::milliseconds(50)));
    EXPECT_FALSE(clock.advance(std::chrono::seconds(1), std::chrono::milliseconds(50)));
    release = true;
    EXPECT_TRUE(clock.settle(std::chrono::seconds(30)));
    participant.join();
}

TEST(DiagnosisArchive, IsAZipOfTheLogsEachCutToItsTail) {
    bai::testing::TestDir dir;
    std::ofstream(dir / "execution.log") << "job j\nsucceeded\n";
    std::ofstream(dir / "stdout.txt") << std::string(100 * 1024, 'a') << "END";
    std::ofstream(dir / "old.zip") << "not included";
    const std::filesystem::path path = write_diagnosis_archive(dir.path(), "/subscriptions/s/clusters/c");
    EXPECT_EQ(path.filename().string(), diagnosis_archive_name("/subscriptions/s/clusters/c"));
    EXPECT_NE(diagnosis_archive_name("/subscriptions/s/clusters/c"), diagnosis_archive_name("/subscriptions/s/clusters/d"));
    EXPECT_EQ(path.filename().string().size(), std::string("diagnosis-tvmps_").size() + 64 + std::string("_d.zip").size());
    std::ifstream in(path, std::ios::binary);
    const std::string zip((std::istreambuf_iterator<char>(in)), {});
    ASSERT_GT(zip.size(), 22u);
    EXPECT_EQ(zip.substr(0, 4), std::string("PK\x03\x04", 4));
    const std::string end = zip.substr(zip.size() - 22);
    EXPECT_EQ(end.substr(0, 4), std::string("PK\x05\x06", 4));
    EXPECT_EQ(static_cast<unsigned char>(end[10]), 2u);  // two entries: the logs, not the other archive
    EXPECT_LT(zip.size(), 64u * 1024 + 1024);              // stdout.txt cut to its last 64 KiB
    EXPECT_NE(zip.find("END"), std::string::npos);
    EXPECT_NE(zip.find("succeeded"), std::string::npos);
    EXPECT_EQ(zip.find("not included"), std::string::npos);
}

}  // namespace
}  // namespace bai::engine
