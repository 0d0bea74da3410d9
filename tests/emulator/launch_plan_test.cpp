#include "emulator/engine/launch_plan.h"

#include <gtest/gtest.h>

namespace bai::engine {
namespace {

using nlohmann::json;

PlanInputs two_nodes() {
    PlanInputs in;
    in.nodes = {{"tvm-a", "127.0.1.1", 4}, {"tvm-b", "127.0.1.2", 4}};
    in.default_python = "python";
    in.mpi_agent = "/data/nodes/bin/mpi-agent";
    in.launcher_hostfile = "/data/nodes/c/tvm-a/jobs/j/hostfile";
    return in;
}

TEST(LaunchPlan, CustomRunsOnceOnTheMaster) {
    LaunchPlan plan = plan_launch({{"toolType", "custom"}, {"customToolkitSettings", {{"commandLine", "echo $X"}}}}, two_nodes());
    ASSERT_EQ(plan.processes.size(), 1u);
    EXPECT_EQ(plan.processes[0].node, 0u);
    EXPECT_EQ(plan.processes[0].command, "echo $X");
    EXPECT_EQ(plan.processes[0].stdout_name, "stdout.txt");
    EXPECT_EQ(plan.processes[0].stderr_name, "stderr.txt");
    EXPECT_EQ(plan.hostfile, "127.0.1.1 slots=4\n127.0.1.2 slots=4\n");
    EXPECT_TRUE(plan.preparation.empty());
}

TEST(LaunchPlan, PreparationOnEveryNodeWithTheMasterKeepingTheServiceNames) {
    LaunchPlan plan = plan_launch({{"jobPreparation", {{"commandLine", "apt-get install -y x"}}},
                                   {"customToolkitSettings", {{"commandLine", "true"}}}},
                                  two_nodes());
    ASSERT_EQ(plan.preparation.size(), 2u);
    EXPECT_EQ(plan.preparation[0].stdout_name, "stdout-job_prep.txt");
    EXPECT_EQ(plan.preparation[1].stdout_name, "stdout-job_prep-tvm-b.txt");
    EXPECT_EQ(plan.preparation[1].node, 1u);
    EXPECT_EQ(plan.preparation[1].command, "apt-get install -y x");
}

TEST(LaunchPlan, MpiToolkitsRunUnderMpirunWithProcessCountRanks) {
    struct Case {
        json properties;
        std::string rank_command;
    } cases[] = {
        {{{"customMpiSettings", {{"commandLine", "hostname"}, {"processCount", 4}}}}, "hostname"},
        {{{"horovodSettings", {{"pythonScriptFilePath", "$S/train.py"}, {"commandLineArgs", "--epochs 1"}, {"processCount", 4}}}},
         "python $S/train.py --epochs 1"},
        {{{"chainerSettings", {{"pythonScriptFilePath", "t.py"}, {"pythonInterpreterPath", "/opt/py"}, {"processCount", 4}}}},
         "/opt/py t.py"},
        {{{"cntkSettings", {{"languageType", "BrainScript"}, {"configFilePath", "c.cntk"}, {"commandLineArgs", "a=1"}, {"processCount", 4}}}},
         "cntk configFile=c.cntk a=1"},
        {{{"cntkSettings", {{"languageType", "Python"}, {"pythonScriptFilePath", "c.py"}, {"processCount", 4}}}}, "python c.py"},
        {{{"caffeSettings", {{"configFilePath", "solver.prototxt"}, {"processCount", 4}}}}, "caffe train --solver=solver.prototxt"},
        {{{"caffeSettings", {{"pythonScriptFilePath", "c.py"}, {"processCount", 4}}}}, "python c.py"},
    };
    for (const Case& c : cases) {
        LaunchPlan plan = plan_launch(c.properties, two_nodes());
        ASSERT_EQ(plan.processes.size(), 1u) << c.properties;
        const PlannedProcess& p = plan.processes[0];
        EXPECT_TRUE(p.mpi_launcher);
        EXPECT_EQ(p.node, 0u);
        EXPECT_EQ(p.stdout_name, "stdout.txt");
        EXPECT_EQ(p.command, mpirun_command(two_nodes(), 4, c.rank_command)) << c.properties;
        EXPECT_NE(p.command.find(" -np 4 "), std::string::npos);
        EXPECT_NE(p.command.find("--hostfile '/data/nodes/c/tvm-a/jobs/j/hostfile'"), std::string::npos);
        EXPECT_NE(p.command.find("plm_rsh_agent '/data/nodes/bin/mpi-agent'"), std::string::npos);
        EXPECT_NE(p.command.find("oob_tcp_if_include lo"), std::string::npos);
    }
}

TEST(LaunchPlan, MpirunQuotesTheRankCommandForTheShell) {
    std::string command = mpirun_command(two_nodes(), 2, "echo 'a b' $X");
    EXPECT_NE(command.find("/bin/bash -c 'echo '\\''a b'\\'' $X'"), std::string::npos) << command;
}

TEST(LaunchPlan, MpirunStartsRanksInTheContainersJobDirectory) {
    PlanInputs in = two_nodes();
    EXPECT_EQ(mpirun_command(in, 2, "x").find("--wdir"), std::string::npos);
    in.rank_directory = "/mnt/batch/tasks/shared/LS_root/jobs/j";
    EXPECT_NE(mpirun_command(in, 2, "x").find(" --wdir '/mnt/batch/tasks/shared/LS_root/jobs/j' /bin/bash -c 'x'"),
              std::string::npos);
    EXPECT_EQ(mpirun_command(in, 2, "x").find("if_base_do_not_resolve"), std::string::npos);
    // On the master's own host, outside its container (docker on hosts), mpirun would take that
    // node for its own and start its ranks outside the container: it resolves no address to an
    // interface of its own.
    in.on_hosts = true;
    in.master_through_agent = true;
    EXPECT_NE(mpirun_command(in, 2, "x").find(" --mca if_base_do_not_resolve 1 "), std::string::npos);
}

// Nodes that are hosts of their own talk over the hosts' network: no layer held to lo; hosts at
// loopback addresses (namespaces of one machine) keep lo alone out of the byte-transfer layer.
TEST(LaunchPlan, MpirunOnHostsUsesTheirNetwork) {
    PlanInputs in = two_nodes();
    in.on_hosts = true;
    in.nodes = {{"tvm-a", "10.1.0.7", 4}, {"tvm-b", "10.1.0.8", 4}};
    std::string command = mpirun_command(in, 2, "x");
    EXPECT_EQ(command.find("if_include"), std::string::npos) << command;
    EXPECT_EQ(command.find("if_exclude"), std::string::npos) << command;
    in.nodes = {{"tvm-a", "127.77.3.11", 4}, {"tvm-b", "127.77.3.12", 4}};
    command = mpirun_command(in, 2, "x");
    EXPECT_EQ(command.find("if_include"), std::string::npos) << command;
    EXPECT_NE(command.find(" --mca btl_tcp_if_exclude lo "), std::string::npos) << command;
}

TEST(LaunchPlan, PyTorchRanksSpreadInBlocksWithTheirIndex) {
    LaunchPlan plan = plan_launch({{"pyTorchSettings", {{"pythonScriptFilePath", "train.py"}, {"processCount", 3},
                                                       {"communicationBackend", "gloo"}}}},
                                  two_nodes());
    ASSERT_EQ(plan.processes.size(), 3u);
    EXPECT_EQ(plan.processes[0].node, 0u);
    EXPECT_EQ(plan.processes[1].node, 0u);
    EXPECT_EQ(plan.processes[2].node, 1u);
    for (int rank = 0; rank < 3; ++rank) {
        const PlannedProcess& p = plan.processes[static_cast<size_t>(rank)];
        EXPECT_EQ(p.env.at("AZ_BATCHAI_TASK_INDEX"), std::to_string(rank));
        EXPECT_EQ(p.env.at("AZ_BATCHAI_PYTORCH_BACKEND"), "gloo");
        EXPECT_EQ(p.env.at("AZ_BATCHAI_PYTORCH_INIT_METHOD"), "file://${AZ_BATCHAI_SHARED_JOB_TEMP}/pytorch_init");
        EXPECT_EQ(p.stdout_name, "stdout-" + std::to_string(rank) + ".txt");
        EXPECT_FALSE(p.mpi_launcher);
    }
}

TEST(LaunchPlan, Caffe2RunsOneShardPerNode) {
    LaunchPlan plan = plan_launch({{"caffe2Settings", {{"pythonScriptFilePath", "resnet.py"}, {"commandLineArgs", "--x"}}}}, two_nodes());
    ASSERT_EQ(plan.processes.size(), 2u);
    EXPECT_EQ(plan.processes[1].node, 1u);
    EXPECT_EQ(plan.processes[1].env.at("AZ_BATCHAI_TASK_INDEX"), "1");
    EXPECT_EQ(plan.processes[1].command, "python resnet.py --x");
    EXPECT_EQ(plan.processes[1].stderr_name, "stderr-1.txt");
}

TEST(LaunchPlan, TensorFlowSingleNodeIsOneMasterLoggingAsWorkerZero) {
    LaunchPlan plan = plan_launch({{"tensorFlowSettings", {{"pythonScriptFilePath", "m.py"}, {"masterCommandLineArgs", "--a"}}}},
                                  {{{"tvm-a", "127.0.1.1", 1}}, "python", "", ""});
    ASSERT_EQ(plan.processes.size(), 1u);
    EXPECT_EQ(plan.processes[0].command, "python m.py --a");
    EXPECT_EQ(plan.processes[0].stdout_name, "stdout-wk-0.txt");
    EXPECT_FALSE(plan.processes[0].env.count("TF_CONFIG"));
}

TEST(LaunchPlan, TensorFlowDistributedFollowsTheDocumentedExample) {
    LaunchPlan plan = plan_launch({{"tensorFlowSettings",
                                    {{"pythonScriptFilePath", "m.py"}, {"masterCommandLineArgs", "--m"},
                                     {"workerCommandLineArgs", "--w"}, {"parameterServerCommandLineArgs", "--p"},
                                     {"workerCount", 2}, {"parameterServerCount", 1}}}},
                                  two_nodes());
    ASSERT_EQ(plan.processes.size(), 3u);
    const PlannedProcess& ps = plan.processes[0];
    const PlannedProcess& master = plan.processes[1];
    const PlannedProcess& worker = plan.processes[2];
    EXPECT_FALSE(ps.required);
    EXPECT_TRUE(master.required);
    EXPECT_EQ(ps.command, "python m.py --p");
    EXPECT_EQ(master.command, "python m.py --m");
    EXPECT_EQ(worker.command, "python m.py --w");
    EXPECT_EQ(ps.stdout_name, "stdout-ps-0.txt");
    EXPECT_EQ(worker.stdout_name, "stdout-wk-1.txt");
    EXPECT_EQ(master.env.at("AZ_BATCHAI_PS_HOSTS"), "127.0.1.1:2222");
    EXPECT_EQ(master.env.at("AZ_BATCHAI_WORKER_HOSTS"), "127.0.1.1:2223,127.0.1.2:2222");
    EXPECT_EQ(worker.env.at("AZ_BATCHAI_TASK_INDEX"), "1");
    json config = json::parse(master.env.at("TF_CONFIG"));
    EXPECT_EQ(config["task"], (json{{"type", "master"}, {"index", 0}}));
    EXPECT_EQ(config["cluster"]["worker"], (json{"127.0.1.1:2223", "127.0.1.2:2222"}));
    EXPECT_EQ(config["environment"], "cloud");
    EXPECT_EQ(json::parse(ps.env.at("TF_CONFIG"))["task"]["type"], "ps");
    EXPECT_EQ(worker.node, 1u);
}

TEST(LaunchPlan, RefusesWhatCannotRun) {
    EXPECT_THROW(plan_launch({{"customToolkitSettings", {{"commandLine", "x"}}}}, PlanInputs{}), std::invalid_argument);
    EXPECT_THROW(plan_launch({{"customMpiSettings", {{"commandLine", "x"}, {"processCount", 0}}}}, two_nodes()),
                 std::invalid_argument);
}

}  // namespace
}  // namespace bai::engine
