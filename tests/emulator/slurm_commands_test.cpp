// The Slurm commands of nodes on Slurm (slurm.md), built and read without a Slurm: the squeue lines
// here are as the test cluster's squeue printed them (tests/integration/test_slurm_cluster.py).
#include "emulator/engine/slurm_commands.h"

#include "emulator/engine/process.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <unistd.h>
#include <thread>
#include <iterator>
#include <fstream>
#include <csignal>

namespace bai::engine {
namespace {

SlurmSettings settings() {
    SlurmSettings s;
    s.instance = "bai0123abcd";
    s.partition = "main";
    s.lowpriority_partition = "lowpri";
    s.log_dir = "/data/slurm";
    return s;
}

bool has(const std::vector<std::string>& argv, const std::string& arg) {
    return std::find(argv.begin(), argv.end(), arg) != argv.end();
}

TEST(SlurmCommands, AHolderAsksForTheNodesSizeAndItsPriority) {
    HolderAsk ask{"tvm-1_1-20261127t000000z", "/subscriptions/s/clusters/c", 6, 56 * 1024, 1, false};
    std::vector<std::string> argv = sbatch_argv(settings(), ask);
    EXPECT_EQ(argv.front(), "sbatch");
    EXPECT_TRUE(has(argv, "--parsable"));
    EXPECT_TRUE(has(argv, "--no-requeue"));  // a pre-emption ends the holder, which the poll reads
    EXPECT_TRUE(has(argv, "--job-name=bai0123abcd-tvm-1_1-20261127t000000z"));
    EXPECT_TRUE(has(argv, "--comment=bai:bai0123abcd:/subscriptions/s/clusters/c"));
    EXPECT_TRUE(has(argv, "--cpus-per-task=6"));
    EXPECT_TRUE(has(argv, "--mem=57344"));
    EXPECT_TRUE(has(argv, "--gres=gpu:1"));
    EXPECT_TRUE(has(argv, "--partition=main"));
    EXPECT_TRUE(has(argv, "--output=/data/slurm/tvm-1_1-20261127t000000z.holder.log"));
    EXPECT_EQ(std::vector<std::string>(argv.end() - 2, argv.end()),
              (std::vector<std::string>{"--wrap", "exec sleep infinity"}));
    ask.low_priority = true;
    ask.gpus = 0;
    argv = sbatch_argv(settings(), ask);
    EXPECT_TRUE(has(argv, "--partition=lowpri"));
    EXPECT_FALSE(has(argv, "--partition=main"));
    EXPECT_FALSE(std::any_of(argv.begin(), argv.end(), [](const std::string& a) { return a.rfind("--gres", 0) == 0; }));
    SlurmSettings qos = settings();
    qos.lowpriority_partition.clear();
    qos.lowpriority_qos = "scavenger";
    argv = sbatch_argv(qos, ask);
    EXPECT_TRUE(has(argv, "--qos=scavenger"));
    EXPECT_TRUE(has(argv, "--partition=main"));
    ask.cores = 0;
    EXPECT_THROW(sbatch_argv(settings(), ask), std::invalid_argument);
}

// The holder's script run against a docker and a squeue of the test's (scripts on the PATH that
// log what they are asked): at start it removes this emulator's containers of allocations Slurm
// no longer runs (and none when squeue does not answer, or does not list the holder); on SIGTERM,
// the containers of its own allocation.
class HolderScript : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() / ("bai-holder-" + std::to_string(::getpid()) + "-" +
                                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::remove_all(dir_);
        std::filesystem::create_directories(dir_ / "bin");
        // Containers: c-own (this holder's, 100), c-orphan (7: ended), c-live (55: running),
        // c-other (another emulator's: not listed by the owner filter).
        write("bin/docker", "#!/bin/sh\necho \"$*\" >> \"$LOG\"\n"
                            "case \"$1\" in\n"
                            "  ps) case \"$*\" in *allocation=100*) echo c-own ;; *\"owner=/data/it's nodes\"*) printf 'c-own\\nc-orphan\\nc-live\\n' ;; esac ;;\n"
                            "  inspect) case \"$*\" in *c-own) echo 100 ;; *c-orphan) echo 7 ;; *c-live) echo 55 ;; esac ;;\n"
                            "esac\n");
        write("bin/squeue", "#!/bin/sh\n[ -n \"$SQUEUE_FAILS\" ] && exit 1\nprintf \"$RUNNING\"\n");
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }

    void write(const std::string& name, const std::string& text) {
        std::ofstream(dir_ / name) << text;
        std::filesystem::permissions(dir_ / name, std::filesystem::perms::owner_all);
    }
    std::string log() const {
        std::ifstream in(dir_ / "docker.log");
        return std::string(std::istreambuf_iterator<char>(in), {});
    }
    // Runs the script until it sleeps, then sends it SIGTERM as Slurm does; what docker was asked.
    std::string run(const std::string& running, bool squeue_fails = false) {
        SlurmSettings s;
        s.docker_owner = "/data/it's nodes";
        Environment env{{"PATH", (dir_ / "bin").string() + ":/usr/bin:/bin"}, {"LOG", (dir_ / "docker.log").string()},
                        {"SLURM_JOB_ID", "100"}, {"RUNNING", running}};
        if (squeue_fails) env["SQUEUE_FAILS"] = "1";
        std::shared_ptr<Process> p = Process::start({{"/bin/sh", "-c", holder_script(s)}, env, "/", "/dev/null", "/dev/null"});
        // Asleep once the sweep is done: the sleep's parent is the script.
        for (int i = 0; i < 500; ++i) {
            const CommandOutput sleeping = run_command({"pgrep", "-P", std::to_string(p->pid()), "sleep"}, env, dir_);
            if (sleeping.status.code == 0) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        const std::string before = log();
        ::kill(p->pid(), SIGTERM);
        EXPECT_EQ(p->wait().code, 0);  // the trap exits 0
        p->kill_group(SIGKILL);  // the sleep
        return before + "--TERM--\n" + log().substr(before.size());
    }

    std::filesystem::path dir_;
};

TEST_F(HolderScript, SweepsEndedAllocationsAtStartAndItsOwnAtTerm) {
    const std::string asked = run("100\n55\n");
    const std::string at_start = asked.substr(0, asked.find("--TERM--"));
    const std::string at_term = asked.substr(asked.find("--TERM--"));
    EXPECT_NE(at_start.find("rm --force c-orphan"), std::string::npos) << asked;
    EXPECT_EQ(at_start.find("rm --force c-live"), std::string::npos) << asked;
    EXPECT_EQ(at_start.find("rm --force c-own"), std::string::npos) << asked;
    EXPECT_NE(at_start.find("ps --all --quiet --filter label=bai-emulator.owner=/data/it's nodes"), std::string::npos) << asked;
    EXPECT_NE(at_term.find("ps --all --quiet --filter label=bai-emulator.owner=/data/it's nodes --filter label=bai-emulator.allocation=100"),
              std::string::npos) << asked;
    EXPECT_NE(at_term.find("rm --force c-own"), std::string::npos) << asked;
    EXPECT_EQ(at_term.find("c-live"), std::string::npos) << asked;
}

TEST_F(HolderScript, NoSweepWhenSqueueFailsOrDoesNotListTheHolder) {
    std::string asked = run("", true);
    EXPECT_EQ(asked.find("rm --force c-orphan"), std::string::npos) << asked;
    EXPECT_NE(asked.find("rm --force c-own"), std::string::npos) << asked;  // the trap still cleans its own
    std::filesystem::remove(dir_ / "docker.log");
    asked = run("55\n");  // a controller's partial answer: the holder itself is not in it
    EXPECT_EQ(asked.find("rm --force c-orphan"), std::string::npos) << asked;
    EXPECT_EQ(asked.find("rm --force c-live"), std::string::npos) << asked;
}

TEST(SlurmCommands, AHoldersScriptIsTheWrapOfItsSbatchAndPlainWithoutDocker) {
    SlurmSettings s = settings();
    s.docker_owner = "/data/nodes";
    const std::vector<std::string> argv = sbatch_argv(s, {"n1", "/c", 1, 0, 0, false});
    ASSERT_EQ(argv[argv.size() - 2], "--wrap");
    EXPECT_EQ(argv.back(), holder_script(s));
    s.docker_owner.clear();
    EXPECT_EQ(holder_script(s), "exec sleep infinity");
}

TEST(SlurmCommands, ReadsSbatchsAnswer) {
    EXPECT_EQ(parse_sbatch_answer("123\n"), "123");
    EXPECT_EQ(parse_sbatch_answer("77;baitest\n"), "77");
    EXPECT_FALSE(parse_sbatch_answer("sbatch: error: Batch job submission failed\n"));
    EXPECT_FALSE(parse_sbatch_answer(""));
}

TEST(SlurmCommands, ThePollReadsThisInstancesHoldersOnly) {
    const std::string output =
        "1|bai0123abcd-tvm-1_1-x|RUNNING|host1|None\n"
        "2|bai0123abcd-tvm-1_2-x|PENDING||Resources\n"
        "3|baiffffffff-tvm-1_1-x|RUNNING|host2|None\n"  // another emulator's
        "4|someone-elses-job|RUNNING|host2|None\n"
        "5|bai0123abcd-tvm-1_3-x|PREEMPTED|host2|None\n"
        "garbage line\n"
        "x|bai0123abcd-tvm-1_4-x|RUNNING|host1|None\n"
        "6|bai0123abcd-|RUNNING|host1|None\n";
    std::vector<HolderState> holders = parse_squeue(settings(), output);
    ASSERT_EQ(holders.size(), 3u);
    EXPECT_EQ(holders[0].job_id, "1");
    EXPECT_EQ(holders[0].node_id, "tvm-1_1-x");
    EXPECT_EQ(holders[0].host, "host1");
    EXPECT_EQ(holders[1].state, "PENDING");
    EXPECT_EQ(holders[1].host, "");
    EXPECT_EQ(holders[1].reason, "Resources");
    EXPECT_EQ(holders[2].state, "PREEMPTED");
    EXPECT_TRUE(parse_squeue(SlurmSettings{}, output).empty());  // no instance: nothing is ours
}

TEST(SlurmCommands, WhatAHoldersStateMeansForItsNode) {
    EXPECT_EQ(fate_of("PENDING"), HolderFate::waiting);
    EXPECT_EQ(fate_of("CONFIGURING"), HolderFate::waiting);
    EXPECT_EQ(fate_of("RUNNING"), HolderFate::held);
    EXPECT_EQ(fate_of("PREEMPTED"), HolderFate::preempted);
    EXPECT_EQ(fate_of("NODE_FAIL"), HolderFate::failed);
    EXPECT_EQ(fate_of("CANCELLED"), HolderFate::released);
    EXPECT_EQ(fate_of("CANCELLED by 0"), HolderFate::released);
    EXPECT_EQ(fate_of("TIMEOUT"), HolderFate::released);
    EXPECT_EQ(fate_of("COMPLETED"), HolderFate::released);
}

TEST(SlurmCommands, LossTextNamesTheJobItsStateAndAReasonWhenThereIsOne) {
    EXPECT_EQ(holder_loss_text({"12", "tvm-1", "NODE_FAIL", "host1", "NodeDown"}), "Slurm job 12 NODE_FAIL (NodeDown)");
    EXPECT_EQ(holder_loss_text({"7", "tvm-1", "CANCELLED by 0", "host1", "None"}), "Slurm job 7 CANCELLED by 0");
    EXPECT_EQ(holder_loss_text({"7", "tvm-1", "PREEMPTED", "host1", ""}), "Slurm job 7 PREEMPTED");
}

TEST(SlurmCommands, InstancesAndHolderNames) {
    const std::string a = slurm_instance_id("/data/dir", 1);
    EXPECT_EQ(a.size(), 11u);
    EXPECT_EQ(a.rfind("bai", 0), 0u);
    EXPECT_EQ(slurm_instance_id("/data/dir/", 1), slurm_instance_id("/data/dir/.", 1));
    EXPECT_NE(a, slurm_instance_id("/data/dir", 2));  // the directory made again
    EXPECT_NE(a, slurm_instance_id("/data/other", 1));
    SlurmSettings s = settings();
    EXPECT_EQ(node_of_holder(s, holder_name(s, "tvm-9")), "tvm-9");
    EXPECT_FALSE(node_of_holder(s, "bai0123abcd"));
    EXPECT_FALSE(node_of_holder(s, "bai0123abce-tvm-9"));
}

TEST(SlurmCommands, AStepRunsInItsHoldersAllocationAndIsCancelledByItself) {
    std::vector<std::string> prefix = srun_prefix("42", "run7-rank0", "/data/nodes/c/tvm-1/jobs/j");
    EXPECT_EQ(prefix.front(), "srun");
    EXPECT_TRUE(has(prefix, "--jobid=42"));
    EXPECT_TRUE(has(prefix, "--overlap"));
    EXPECT_TRUE(has(prefix, "--export=ALL"));
    EXPECT_TRUE(has(prefix, "--job-name=run7-rank0"));
    EXPECT_TRUE(has(prefix, "--chdir=/data/nodes/c/tvm-1/jobs/j"));
    EXPECT_TRUE(has(prefix, "--mpi=none"));
    EXPECT_TRUE(has(prefix, "--"));
    EXPECT_EQ(scancel_step_argv("42", "3"), (std::vector<std::string>{"scancel", "--signal=KILL", "42.3"}));
    EXPECT_EQ(scancel_argv({"1", "2"}), (std::vector<std::string>{"scancel", "1", "2"}));
}

// What follows srun's "--" runs on the host: the process it starts has none of the variables srun
// gives a step, and all the others, values with spaces and newlines among them.
TEST(SlurmCommands, AStepsProcessDropsSlurmsVariables) {
    std::vector<std::string> prefix = srun_prefix("42", "s", "/tmp");
    std::vector<std::string> argv(std::find(prefix.begin(), prefix.end(), "--") + 1, prefix.end());
    argv.insert(argv.end(), {"/usr/bin/env", "-0"});
    const Environment env{{"SLURM_JOB_ID", "42"}, {"SLURM_PROCID", "0"}, {"PMIX_RANK", "0"}, {"PMI_FD", "5"},
                          {"SLURM_CONF_NOT", "x"}, {"KEPT", "a b\nSLURM_X=1"}, {"PATH", "/usr/bin:/bin"},
                          {"MY_SLURM_JOB", "7"}};
    const CommandOutput out = run_command(argv, env, std::filesystem::temp_directory_path());
    ASSERT_EQ(out.status.code, 0) << out.err;
    std::vector<std::string> seen;
    for (size_t start = 0, end; (end = out.out.find('\0', start)) != std::string::npos; start = end + 1) {
        // (PWD: the shell's own, as every shell exports it)
        if (out.out.compare(start, 4, "PWD=") != 0) seen.push_back(out.out.substr(start, end - start));
    }
    std::sort(seen.begin(), seen.end());
    EXPECT_EQ(seen, (std::vector<std::string>{"KEPT=a b\nSLURM_X=1", "MY_SLURM_JOB=7", "PATH=/usr/bin:/bin"}));
}

TEST(SlurmCommands, AHostsAddressAndAHoldersSteps) {
    EXPECT_EQ(parse_node_address("NodeName=host1 Arch=x86_64 CoresPerSocket=1 CPUAlloc=2 NodeAddr=127.77.20.11 "
                                 "NodeHostName=host1 Version=22.05.8\n"),
              "127.77.20.11");
    EXPECT_EQ(parse_node_address("NodeName=gpu7 Arch=x86_64 State=IDLE\n"), "gpu7");
    EXPECT_FALSE(parse_node_address("Node host9 not found\n"));
    // A slurmd that stopped answering, before Slurm calls its host down.
    EXPECT_TRUE(parse_node_unresponsive("NodeName=host1 CPUAlloc=1 State=ALLOCATED+NOT_RESPONDING ThreadsPerCore=1\n"));
    EXPECT_TRUE(parse_node_unresponsive("NodeName=host1 State=DOWN+NOT_RESPONDING Reason=Not responding\n"));
    EXPECT_TRUE(parse_node_unresponsive("NodeName=host1 State=MIXED* \n"));
    EXPECT_FALSE(parse_node_unresponsive("NodeName=host1 State=ALLOCATED ThreadsPerCore=1\n"));
    EXPECT_FALSE(parse_node_unresponsive("NodeName=host1 State=MIXED+DRAIN\n"));
    EXPECT_FALSE(parse_node_unresponsive("Node host9 not found\n"));
    EXPECT_EQ(parse_steps("42", "42.0\n42.batch\n42.extern\n42.13\n421.0\n"), (std::vector<std::string>{"0", "13"}));
    // With their names (--format="%i %j"): a node's own steps (its blob mounts) are spared.
    EXPECT_EQ(parse_steps("42", "42.0 job-run\n42.1 bai-node-mount-0\n42.batch batch\n42.2 step two\n"),
              (std::vector<std::string>{"0", "2"}));
    EXPECT_EQ(squeue_steps_argv("42").front(), "squeue");
}

}  // namespace
}  // namespace bai::engine
