// The whole emulator in-process on a virtual clock, as a scenario replay runs it: ARM, storage
// and the job engine started as one RunningEmulator with the clock and the declared workloads,
// driven over HTTP; a job of 3 virtual hours is done after the clock moves, in milliseconds.
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <thread>

#include "emulator/daemon/options.h"
#include "emulator/daemon/running_emulator.h"
#include "emulator/engine/clock.h"
#include "scenarios/replay/workload_player.h"
#include "tests/common/test_dir.h"

namespace bai::scenarios {
namespace {

using nlohmann::json;

const std::string kGroup = "/subscriptions/s/resourceGroups/rg";
const std::string kWorkspace = kGroup + "/providers/Microsoft.BatchAI/workspaces/ws";

class InProcess : public ::testing::Test {
protected:
    void SetUp() override {
        daemon::Options options;
        options.location = dir / "data";
        options.arm_port = options.blob_port = options.file_port = options.batch_port = options.proxy_port = 0;
        options.lro_delay_ms = 0;
        options.gpus = daemon::parse_options({"--gpus", "none"}).gpus;
        Scenario s = parse_scenario("workload train duration 3h prints \"done\"\n", "in-process.scenario");
        player = std::make_unique<WorkloadPlayer>(s.workloads);
        emulator = daemon::RunningEmulator::start(options, {&clock, player.get()});
        arm = std::make_unique<httplib::Client>(emulator->endpoints().arm);
        arm->enable_server_certificate_verification(false);
    }
    void TearDown() override {
        if (emulator) emulator->stop();
    }

    json call(const std::string& method, const std::string& path, const json& body = nullptr) {
        std::string target = path + "?api-version=" + (path.find("resourceGroups/rg/providers") != std::string::npos ? "2018-05-01" : "2021-04-01");
        httplib::Headers headers{{"Authorization", "Bearer scenario"}};
        httplib::Result r = method == "PUT" ? arm->Put(target, headers, body.dump(), "application/json")
                                            : arm->Get(target, headers);
        EXPECT_TRUE(r) << method << " " << path;
        if (!r) return nullptr;
        EXPECT_LT(r->status, 300) << method << " " << path << ": " << r->body;
        return r->body.empty() ? json() : json::parse(r->body, nullptr, false);
    }
    bool wait_for(const std::function<bool()>& done) {
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        while (std::chrono::steady_clock::now() < deadline) {
            if (done()) return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return false;
    }
    std::string job_state(const std::string& id) {
        return call("GET", id)["properties"].value("executionState", "");
    }

    bai::testing::TestDir dir;
    engine::VirtualClock clock{time::now()};
    std::unique_ptr<WorkloadPlayer> player;
    std::unique_ptr<daemon::RunningEmulator> emulator;
    std::unique_ptr<httplib::Client> arm;
};

TEST_F(InProcess, AJobOfVirtualHoursRunsOnTheVirtualClock) {
    call("PUT", kGroup, {{"location", "eastus"}});
    call("PUT", kWorkspace, {{"location", "eastus"}});
    call("PUT", kWorkspace + "/experiments/e", json::object());
    call("PUT", kWorkspace + "/clusters/c",
         {{"properties",
           {{"vmSize", "STANDARD_D1"},
            {"scaleSettings", {{"manual", {{"targetNodeCount", 1}}}}},
            {"userAccountSettings", {{"adminUserName", "u"}, {"adminUserPassword", "Pw-123456"}}}}}});
    const std::string job = kWorkspace + "/experiments/e/jobs/j";
    call("PUT", job,
         {{"properties",
           {{"cluster", {{"id", kWorkspace + "/clusters/c"}}},
            {"nodeCount", 1},
            {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_TEMP"},
            {"customToolkitSettings", {{"commandLine", "workload train"}}}}}});
    ASSERT_TRUE(wait_for([&] { return job_state(job) == "running"; }));
    clock.advance(std::chrono::hours(3));
    ASSERT_TRUE(wait_for([&] { return job_state(job) == "succeeded"; }));
    EXPECT_EQ(player->attempts(job), 1);
    json info = call("GET", job)["properties"]["executionInfo"];
    EXPECT_EQ(info["exitCode"], 0);
    // The document's times are the virtual clock's: three hours apart.
    auto started = time::parse_iso8601(info.value("startTime", ""));
    auto ended = time::parse_iso8601(info.value("endTime", ""));
    ASSERT_TRUE(started && ended) << info.dump();
    EXPECT_EQ(std::chrono::duration_cast<std::chrono::seconds>(*ended - *started), std::chrono::hours(3));
}

}  // namespace
}  // namespace bai::scenarios
