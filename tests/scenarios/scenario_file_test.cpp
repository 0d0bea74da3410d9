#include "scenarios/replay/scenario_file.h"

#include <gtest/gtest.h>

namespace bai::scenarios {
namespace {

using nlohmann::json;

const char* kPreemption = R"(# A low-priority MNIST job pre-empted once, then done.
name   low-priority training, pre-empted and retried
seed   42
emulator --gpus fake:4 --autoscale-idle 600000

set rg = rg-lp
workload train duration 2h exit 0 prints "epoch 1" prints "epoch 2" writes $AZ_BATCHAI_OUTPUT_MODEL/model.txt "weights"

request PUT arm /subscriptions/${subscription}/resourceGroups/${rg}
header x-ms-client-request-id: scenario-1
{"location": "eastus"}
expect status 201

request PUT arm /subscriptions/${subscription}/resourceGroups/${rg}/providers/Microsoft.BatchAI/workspaces/w/experiments/e/jobs/j
{"properties": {"cluster": {"id": "${cluster}"}, "nodeCount": 1,
  "stdOutErrPathPrefix": "$AZ_BATCHAI_MOUNT_ROOT/afs",
  "customToolkitSettings": {"commandLine": "workload train"}}}
expect status 202
capture operation = header Azure-AsyncOperation
wait until GET arm ${operation} json /status == "Succeeded" within 5m every 10s
advance 30m
fault preempt job j
fault storage blob fail 3 status 503
fault storage file stall 2 for 45s
fault enospc share devstoreaccount1/jobs
fault restart
expect json /properties/executionState != "failed"
expect json /properties/executionInfo exists
expect states j queued running queued running succeeded
expect stdout j stdout.txt contains "epoch 2"
expect file output j MODEL/model.txt == "weights"
request GET blob /devstoreaccount1/c/b body payload.bin
)";

TEST(ScenarioFile, ParsesEveryKindOfStepWithItsLine) {
    Scenario s = parse_scenario(kPreemption, "lp.scenario");
    EXPECT_EQ(s.name, "low-priority training, pre-empted and retried");
    EXPECT_EQ(s.seed, 42u);
    EXPECT_EQ(s.emulator_args, (std::vector<std::string>{"--gpus", "fake:4", "--autoscale-idle", "600000"}));
    ASSERT_EQ(s.workloads.count("train"), 1u);
    const Workload& w = s.workloads.at("train");
    EXPECT_EQ(w.duration, std::chrono::hours(2));
    EXPECT_EQ(w.stdout_lines, (std::vector<std::string>{"epoch 1", "epoch 2"}));
    EXPECT_EQ(w.writes.at(0).second, "weights");

    ASSERT_EQ(s.steps.size(), 19u);
    const auto& group = std::get<RequestStep>(s.steps[1].body);
    EXPECT_EQ(s.steps[1].where.line, 9);
    EXPECT_EQ(group.method, "PUT");
    EXPECT_EQ(group.headers.at(0), (std::pair<std::string, std::string>{"x-ms-client-request-id", "scenario-1"}));
    EXPECT_EQ(json::parse(*group.body), json({{"location", "eastus"}}));
    const auto& job = std::get<RequestStep>(s.steps[3].body);
    EXPECT_EQ(json::parse(*job.body)["properties"]["customToolkitSettings"]["commandLine"], "workload train");
    const auto& wait = std::get<WaitStep>(s.steps[6].body);
    EXPECT_EQ(wait.probe.target, "${operation}");
    EXPECT_EQ(wait.within, std::chrono::minutes(5));
    EXPECT_EQ(wait.every, std::chrono::seconds(10));
    EXPECT_EQ(wait.comparison.value, "Succeeded");
    EXPECT_EQ(std::get<AdvanceStep>(s.steps[7].body).by, std::chrono::minutes(30));
    EXPECT_EQ(std::get<FaultStep>(s.steps[9].body).args, (std::vector<std::string>{"blob", "fail", "3", "503"}));
    EXPECT_EQ(std::get<FaultStep>(s.steps[10].body).args, (std::vector<std::string>{"file", "stall", "2", "45000"}));
    EXPECT_EQ(std::get<ExpectStep>(s.steps[15].body).expected_states.size(), 5u);
    const auto& out = std::get<ExpectStep>(s.steps[16].body);
    EXPECT_EQ(out.subject, "j stdout.txt");
    EXPECT_EQ(out.comparison.op, "contains");
    EXPECT_EQ(std::get<RequestStep>(s.steps[18].body).body_file, "payload.bin");
}

TEST(ScenarioFile, WaitTargetsMayBeCapturedUrls) {
    // `wait until GET arm ${operation}`: a path starting with a variable is accepted.
    Scenario s = parse_scenario("wait until GET arm /x json /a == 1 within 10s\n", "w");
    EXPECT_EQ(std::get<WaitStep>(s.steps[0].body).every, std::chrono::seconds(1));
}

TEST(ScenarioFile, DurationsReadAndPrint) {
    EXPECT_EQ(parse_duration("250ms"), std::chrono::milliseconds(250));
    EXPECT_EQ(parse_duration("1h30m"), std::chrono::minutes(90));
    EXPECT_EQ(parse_duration("7d"), std::chrono::hours(168));
    for (const char* bad : {"", "5", "m", "5x", "1.5h", "9999999999s", "400d"}) EXPECT_FALSE(parse_duration(bad)) << bad;
    EXPECT_EQ(format_duration(std::chrono::milliseconds(93'784'005)), "1d02:03:04.005");
}

TEST(ScenarioFile, BadFilesNameTheFileTheLineAndWhatWasExpected) {
    struct Case {
        const char* text;
        int line;
        const char* needle;
    } cases[] = {
        {"\n\nfrobnicate now\n", 3, "expected a step"},
        {"advance soon\n", 1, "a duration"},
        {"request FETCH arm /x\n", 1, "an HTTP method"},
        {"request GET cloud /x\n", 1, "an endpoint"},
        {"request GET arm x\n", 1, "starting with '/'"},
        {"expect status 999\n", 1, "100 to 599"},
        {"expect json properties/x == 1\n", 1, "JSON pointer"},
        {"expect json /x ~= 1\n", 1, "a comparison"},
        {"expect json /x == {\"a\": \n", 1, "a JSON value"},
        {"expect json /x exists 5\n", 1, "the end of the line"},
        {"expect states j\n", 1, "the job's states"},
        {"capture x = cookie y\n", 1, "where to capture from"},
        {"wait until GET arm /x json /a == 1\n", 1, "'within'"},
        {"wait until GET arm /x json /a == 1 within 1m every 0s\n", 1, "positive"},
        {"fault preempt cluster c\n", 1, "'node ID' or 'job NAME'"},
        {"fault storage blob fail 0\n", 1, "at least one"},
        {"fault storage blob fail 2 status 404\n", 1, "500 or 503"},
        {"fault storage file stall 2\n", 1, "'for'"},
        {"fault enospc share jobs\n", 1, "ACCOUNT/NAME"},
        {"workload w exit 1\n", 1, "'duration D'"},
        {"workload w duration 1h exit 300\n", 1, "0 to 255"},
        {"workload w duration 1h\nworkload w duration 2h\n", 2, "declared twice"},
        {"workload w duration 1h colour red\n", 1, "expected duration, exit"},
        {"seed many\n", 1, "a seed"},
        {"set x 1\n", 1, "'='"},
        {"set x =\n", 1, "a value"},
        {"fault storage file heal\n", 1, "fail, stall or recover"},
        {"fault storage file recover now\n", 1, "the end of the line"},
        {"expect body contains \"unterminated\n", 1, "unterminated"},
        {"request PUT arm /j body j.json\n{\"a\": 1}\n", 2, "body file and an inline body"},
        {"request PUT arm /j\n{\"commandLine\": \"workload nope\"}\n", 1, "workload 'nope'"},
    };
    for (const Case& c : cases) {
        try {
            parse_scenario(c.text, "bad.scenario");
            ADD_FAILURE() << "accepted: " << c.text;
        } catch (const ScenarioError& e) {
            EXPECT_EQ(e.where.line, c.line) << c.text;
            std::string message = e.what();
            EXPECT_EQ(message.rfind("bad.scenario:" + std::to_string(c.line) + ": ", 0), 0u) << message;
            EXPECT_NE(message.find(c.needle), std::string::npos) << message;
        }
    }
}

TEST(ScenarioFile, SetTakesTheRestOfTheLineOrOneQuotedWord) {
    Scenario s = parse_scenario(R"(set body = "nodeCount": 1, "cluster": {"id": "${c}"}
set quoted = "two words"
set plain = x
fault storage blob recover
)",
                                "set.scenario");
    ASSERT_EQ(s.steps.size(), 4u);
    EXPECT_EQ(std::get<SetStep>(s.steps[0].body).value, R"("nodeCount": 1, "cluster": {"id": "${c}"})");
    EXPECT_EQ(std::get<SetStep>(s.steps[1].body).value, "two words");
    EXPECT_EQ(std::get<SetStep>(s.steps[2].body).value, "x");
    EXPECT_EQ(std::get<FaultStep>(s.steps[3].body).args, (std::vector<std::string>{"blob", "recover"}));
}

}  // namespace
}  // namespace bai::scenarios
