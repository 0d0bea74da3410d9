// The Batch service's parsers: auto-scale formulas, task command lines, the SharedKey string.
#include <gtest/gtest.h>

#include "emulator/batch/autoscale_formula.h"
#include "emulator/batch/batch_shared_key.h"
#include "emulator/batch/command_line.h"

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
        "samples = $PendingTasks.GetSamplePercent(TimeInterval_Minute * 3) < 70 ? 1 : avg($PendingTasks.GetSample(180 * TimeInterval_Second));\n"
        "$TargetDedicatedNodes = min(maxNodes, samples);\n"
        "$TargetLowPriorityNodes = max(0, $PendingTasks - 5);\n"
        "$NodeDeallocationOption = taskcompletion;";
    AutoScaleResult r = run(formula, 3);
    ASSERT_FALSE(r.error) << *r.error;
    EXPECT_EQ(r.target_dedicated, 3);
    EXPECT_EQ(r.target_low_priority, 0);
    EXPECT_EQ(r.deallocation, "taskcompletion");
    EXPECT_EQ(r.results, "maxNodes=5;samples=3;$TargetDedicatedNodes=3;$TargetLowPriorityNodes=0;$NodeDeallocationOption=taskcompletion;");
    EXPECT_EQ(run(formula, 12).target_dedicated, 5);
    EXPECT_EQ(run(formula, 12).target_low_priority, 7);
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

}  // namespace
}  // namespace bai::batch
