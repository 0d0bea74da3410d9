// The Batch service's parsers and rules: auto-scale formulas over a metric history, task command
// lines, the SharedKey string, how a task's and a job's documents change as they run and end.
#include <gtest/gtest.h>

#include "emulator/batch/autoscale_formula.h"
#include "emulator/batch/batch_shared_key.h"
#include "emulator/batch/command_line.h"
#include "emulator/batch/task_states.h"

namespace bai::batch {
namespace {

AutoScaleResult run(const std::string& formula, double pending = 0) {
    AutoScaleInputs in = metrics_at(0);
    in.metrics["$PendingTasks"] = pending;
    return evaluate_autoscale(formula, in);
}

TEST(AutoScaleFormula, FollowsPendingTasksWithSamplesAndFunctions) {
    const std::string formula =
        "// up to 5 nodes, one per pending task\n"
        "maxNodes = 5;\n"
        "samples = $PendingTasks.GetSamplePercent(TimeInterval_Minute * 3) < 70 ? max($PendingTasks.GetSample(1)) : avg($PendingTasks.GetSample(180 * TimeInterval_Second));\n"
        "$TargetDedicatedNodes = min(maxNodes, samples);\n"
        "$TargetLowPriorityNodes = max(0, $PendingTasks - 5);\n"
        "$NodeDeallocationOption = taskcompletion;";
    AutoScaleResult r = run(formula, 3);
    ASSERT_FALSE(r.error) << *r.error;
    EXPECT_EQ(r.target_dedicated, 3);
    EXPECT_EQ(r.target_low_priority, 0);
    EXPECT_EQ(r.deallocation, "taskcompletion");
    EXPECT_EQ(r.results, "$TargetDedicatedNodes=3;$TargetLowPriorityNodes=0;$NodeDeallocationOption=taskcompletion;maxNodes=5;samples=3");
    EXPECT_EQ(run(formula, 12).target_dedicated, 5);
    EXPECT_EQ(run(formula, 12).target_low_priority, 7);
}

// $PendingTasks now, then `past` sampled every 30 s before (newest first).
AutoScaleResult run_with_history(const std::string& formula, double now, const std::vector<double>& past) {
    AutoScaleInputs in = metrics_at(0);
    in.lenient_samples = false;
    in.metrics["$PendingTasks"] = now;
    std::deque<MetricSample> history;
    for (size_t i = 0; i < past.size(); ++i) {
        std::map<std::string, double> sample = in.metrics;
        sample["$PendingTasks"] = past[i];
        history.push_back({-30.0 * static_cast<double>(i + 1), sample});
    }
    in.history = &history;
    in.now = 0;
    return evaluate_autoscale(formula, in);
}

TEST(AutoScaleFormula, SamplesComeFromTheHistoryByCountOrInterval) {
    const std::string warm_up =
        "percent = $PendingTasks.GetSamplePercent(TimeInterval_Minute * 3);\n"
        "$TargetDedicatedNodes = percent < 70 ? 1 : avg($PendingTasks.GetSample(TimeInterval_Minute * 3));";
    EXPECT_EQ(run_with_history(warm_up, 9, {}).target_dedicated, 1);  // a new pool: 1 sample of 6
    EXPECT_EQ(run_with_history(warm_up, 9, {}).results,
              "$TargetDedicatedNodes=1;$TargetLowPriorityNodes=0;$NodeDeallocationOption=requeue;percent=16.6666666666667");
    EXPECT_EQ(run_with_history(warm_up, 6, {0, 0, 6, 6, 6, 6}).target_dedicated, 4);  // 30 s to 3 min ago, and now
    EXPECT_EQ(run_with_history(warm_up, 6, {0, 0, 6, 6, 6, 6, 100, 100}).target_dedicated, 4);  // older ones left out
    EXPECT_EQ(run_with_history("$TargetDedicatedNodes = sum($PendingTasks.GetSample(3));", 1, {2, 4, 8}).target_dedicated, 7);
    EXPECT_EQ(run_with_history("$TargetDedicatedNodes = $PendingTasks.Count();", 1, {2, 4, 8}).target_dedicated, 4);
    // Between 2 and 1 minutes ago: the samples 60 s, 90 s and 120 s old.
    EXPECT_EQ(run_with_history("$TargetDedicatedNodes = sum($PendingTasks.GetSample(TimeInterval_Minute * 2, TimeInterval_Minute));",
                               0, {1, 10, 100, 1000, 10000}).target_dedicated, 1110);
    // A percentage asked for and not there is the formula's fault; checking a formula forgives it.
    const std::string strict = "$TargetDedicatedNodes = avg($PendingTasks.GetSample(TimeInterval_Minute * 3, 90));";
    EXPECT_NE(run_with_history(strict, 1, {1}).error->find("% asked"), std::string::npos);
    EXPECT_EQ(run_with_history(strict, 1, {1, 1, 1, 1, 1, 1}).target_dedicated, 1);
    EXPECT_FALSE(run(strict).error);
    EXPECT_NE(run("$TargetDedicatedNodes = avg($PendingTasks.GetSample(\"x\"));").error->find("time interval"), std::string::npos);
    // An interval over an interval is a number: a count of samples.
    EXPECT_EQ(run_with_history("$TargetDedicatedNodes = count($PendingTasks.GetSample(TimeInterval_Minute / TimeInterval_Second));",
                               0, {1, 1}).target_dedicated, 3);
}

TEST(AutoScaleFormula, ArithmeticComparisonsAndConditionals) {
    EXPECT_EQ(run("$TargetDedicatedNodes = (2 + 3) * 4 % 7 - -1;").target_dedicated, 7);
    EXPECT_EQ(run("a = 1 < 2 && !(3 == 4) || 0; $TargetDedicatedNodes = a ? 10 : 20;").target_dedicated, 10);
    EXPECT_EQ(run("$TargetDedicatedNodes = ceil(2.1) + floor(2.9) + round(0.5) + pow(2, 3) + sqrt(16);").target_dedicated, 18);
    EXPECT_EQ(run("v = $PendingTasks.GetSample(5) * 2; $TargetDedicatedNodes = sum(v) + count(v);", 4).target_dedicated, 9);
    EXPECT_EQ(run("$TargetDedicatedNodes = -4;").target_dedicated, 0);  // never fewer than none
    EXPECT_EQ(run("$TargetDedicatedNodes = 1;").deallocation, "requeue");
}

TEST(AutoScaleFormula, FaultsNameTheirPosition) {
    EXPECT_NE(run("$TargetDedicatedNodes = ;").error->find("position 25: expected"), std::string::npos) << *run("$TargetDedicatedNodes = ;").error;
    EXPECT_NE(run("$TargetDedicatedNodes = nosuch;").error->find("unknown name nosuch"), std::string::npos);
    EXPECT_NE(run("$TargetDedicatedNodes = frobnicate(1);").error->find("unknown function"), std::string::npos);
    EXPECT_NE(run("$NodeDeallocationOption = 3;").error->find("requeue, terminate"), std::string::npos);
    EXPECT_NE(run("$TargetDedicatedNodes = \"many\";").error->find("must be a number"), std::string::npos);
    EXPECT_TRUE(run("$TargetDedicatedNodes = 1 2;").error);
    EXPECT_TRUE(run("x = (1;").error);
    EXPECT_TRUE(run("x = .;").error);
}

TEST(CommandLine, SplitsAsAShellWouldWithoutExpanding) {
    using Words = std::vector<std::string>;
    EXPECT_EQ(split_command_line("/bin/bash -c 'echo $HOME && ls'"), (Words{"/bin/bash", "-c", "echo $HOME && ls"}));
    EXPECT_EQ(split_command_line("python3  train.py --lr=0.1\t\"a b\""), (Words{"python3", "train.py", "--lr=0.1", "a b"}));
    EXPECT_EQ(split_command_line(R"(echo "say \"hi\" \$x \n" a\ b)"), (Words{"echo", R"(say "hi" $x \n)", "a b"}));
    EXPECT_EQ(split_command_line("echo ''"), (Words{"echo", ""}));
    EXPECT_FALSE(split_command_line("echo 'open"));
    EXPECT_FALSE(split_command_line("   "));
}

TEST(BatchSharedKey, TheStringToSignOfTheSdk) {
    httplib::Request r;
    r.method = "POST";
    r.target = "/pools/p1/resize?api-version=2022-10-01.16.0&timeout=30&empty=";
    r.headers.emplace("Content-Type", "application/json; odata=minimalmetadata");
    r.headers.emplace("Content-Length", "42");
    r.headers.emplace("ocp-date", "Mon, 23 Nov 2026 10:00:00 GMT");
    r.headers.emplace("client-request-id", "x");
    EXPECT_EQ(batch_string_to_sign(r, "acct"),
              "POST\n\n\n42\n\napplication/json; odata=minimalmetadata\n\n\n\n\n\n\n"
              "ocp-date:Mon, 23 Nov 2026 10:00:00 GMT\n/acct/pools/p1/resize\napi-version:2022-10-01.16.0\ntimeout:30");
}

TEST(TaskStates, ARunRetriesUntilItsLimitThenFails) {
    nlohmann::json task = {{"state", "running"}, {"constraints", {{"maxTaskRetryCount", 1}}}, {"executionInfo", {{"retryCount", 0}}}};
    EXPECT_TRUE(end_run(task, 2, nullptr, "t1"));
    EXPECT_EQ(task["state"], "active");
    EXPECT_EQ(task["executionInfo"]["retryCount"], 1);
    EXPECT_EQ(task["executionInfo"]["failureInfo"]["code"], "FailureExitCode");
    task["state"] = "running";
    EXPECT_FALSE(end_run(task, 2, nullptr, "t2"));
    EXPECT_EQ(task["state"], "completed");
    EXPECT_EQ(task["executionInfo"]["result"], "failure");
    nlohmann::json ok = {{"state", "running"}, {"constraints", {{"maxTaskRetryCount", -1}}}, {"executionInfo", nlohmann::json::object()}};
    EXPECT_FALSE(end_run(ok, 0, nullptr, "t3"));
    EXPECT_EQ(ok["executionInfo"]["result"], "success");
    requeue_document(ok, "t4");
    EXPECT_EQ(ok["executionInfo"]["requeueCount"], 1);
    EXPECT_EQ(ok["state"], "active");
}

TEST(TaskStates, ExitConditionsNameTheJobAction) {
    const nlohmann::json job = {{"onTaskFailure", "performexitoptionsjobaction"}};
    nlohmann::json task = {{"executionInfo", {{"exitCode", 3}, {"result", "failure"}}}};
    EXPECT_EQ(job_action_after(task, job), "terminate");  // the default for a failure
    EXPECT_EQ(job_action_after(task, {{"onTaskFailure", "noaction"}}), "none");
    task["exitConditions"] = {{"exitCodes", {{{"code", 3}, {"exitOptions", {{"jobAction", "none"}}}}}},
                              {"exitCodeRanges", {{{"start", 4}, {"end", 9}, {"exitOptions", {{"jobAction", "disable"}}}}}}};
    EXPECT_EQ(job_action_after(task, job), "none");
    task["executionInfo"]["exitCode"] = 7;
    EXPECT_EQ(job_action_after(task, job), "disable");
    nlohmann::json upload = {{"executionInfo", {{"result", "failure"}, {"failureInfo", {{"code", "FileUploadMiscError"}}}}},
                             {"exitConditions", {{"fileUploadError", {{"jobAction", "none"}}}}}};
    EXPECT_EQ(job_action_after(upload, job), "none");
    EXPECT_EQ(job_action_after({{"executionInfo", {{"exitCode", 0}, {"result", "success"}}}}, job), "none");
}

TEST(TaskStates, CountsAndLimits) {
    nlohmann::json counts = count_tasks({{{"state", "active"}},
                                         {{"state", "running"}, {"requiredSlots", 2}},
                                         {{"state", "completed"}, {"executionInfo", {{"result", "success"}}}},
                                         {{"state", "completed"}, {"executionInfo", {{"result", "failure"}}}}});
    EXPECT_EQ(counts["taskCounts"], (nlohmann::json{{"active", 1}, {"running", 1}, {"completed", 2}, {"succeeded", 1}, {"failed", 1}}));
    EXPECT_EQ(counts["taskSlotCounts"]["running"], 2);
    EXPECT_EQ(limit_of({{"maxWallClockTime", "PT1H30M"}}, "maxWallClockTime"), std::chrono::seconds(5400));
    EXPECT_FALSE(limit_of({{"maxWallClockTime", "P10675199DT2H48M5.4775807S"}}, "maxWallClockTime"));  // the service's "none"
    EXPECT_FALSE(limit_of(nlohmann::json::object(), "retentionTime"));
    nlohmann::json job = {{"state", "terminating"}, {"executionInfo", nlohmann::json::object()}};
    complete_job(job, "AllTasksComplete", "t");
    EXPECT_EQ(job["state"], "completed");
    EXPECT_EQ(job["previousState"], "terminating");
    EXPECT_EQ(job["executionInfo"]["terminateReason"], "AllTasksComplete");
}

}  // namespace
}  // namespace bai::batch
