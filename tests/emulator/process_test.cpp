#include "emulator/engine/process.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "emulator/engine/cpu_affinity.h"
#include "tests/common/test_dir.h"

namespace bai::engine {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

struct Shell {
    bai::testing::TestDir dir;
    ProcessSpec spec(const std::string& script) {
        ProcessSpec s;
        s.argv = {"sh", "-c", script};
        s.env = {{"PATH", "/usr/bin:/bin"}, {"ONLY", "this"}};
        s.cwd = dir.path();
        s.stdout_path = dir / "out.txt";
        s.stderr_path = dir / "err.txt";
        return s;
    }
};

TEST(Process, ReportsTheExitCodeAndAppendsItsOutputToItsFiles) {
    Shell sh;
    std::ofstream(sh.dir / "out.txt") << "before\n";
    EXPECT_EQ(Process::start(sh.spec("echo out; echo err >&2; exit 7"))->wait().code, 7);
    EXPECT_EQ(read(sh.dir / "out.txt"), "before\nout\n");
    EXPECT_EQ(read(sh.dir / "err.txt"), "err\n");
}

TEST(Process, OneFileForBothStreamsWhenTheyNameTheSame) {
    Shell sh;
    ProcessSpec spec = sh.spec("echo one; echo two >&2; echo three");
    spec.stderr_path = spec.stdout_path;
    EXPECT_EQ(Process::start(spec)->wait().code, 0);
    EXPECT_EQ(read(sh.dir / "out.txt"), "one\ntwo\nthree\n");
}

TEST(Process, RunsInItsDirectoryWithOnlyItsEnvironmentAndNothingOnStdin) {
    Shell sh;
    EXPECT_EQ(Process::start(sh.spec("pwd; env | sort; cat; echo end"))->wait().code, 0);
    const std::string out = read(sh.dir / "out.txt");
    EXPECT_EQ(out.rfind(fs::canonical(sh.dir.path()).string() + "\n", 0), 0u) << out;
    EXPECT_NE(out.find("ONLY=this\n"), std::string::npos) << out;
    EXPECT_EQ(out.find("HOME="), std::string::npos) << out;
    EXPECT_NE(out.find("\nend\n"), std::string::npos) << out;
}

TEST(Process, LeadsASessionOfItsOwnThatKillGroupReaches) {
    Shell sh;
    std::unique_ptr<Process> p = Process::start(sh.spec("sleep 30 & echo $!; ps -o sid= -p $$; wait"));
    for (int i = 0; i < 500 && read(sh.dir / "out.txt").find('\n', read(sh.dir / "out.txt").find('\n') + 1) == std::string::npos; ++i) {
        ::usleep(10'000);
    }
    std::istringstream out(read(sh.dir / "out.txt"));
    int background = 0, session = 0;
    out >> background >> session;
    EXPECT_EQ(session, p->pid());
    EXPECT_EQ(::getpgid(background), p->pid());
    p->kill_group(SIGTERM);
    ExitStatus status = p->wait();
    EXPECT_EQ(status.signal, SIGTERM);
    EXPECT_EQ(status.code, 128 + SIGTERM);
    // The group's other member went too (gone, or a zombie no one has reaped yet).
    auto alive = [&] {
        std::ifstream stat("/proc/" + std::to_string(background) + "/stat");
        std::string pid, name, state;
        return stat >> pid >> name >> state && state != "Z";
    };
    for (int i = 0; i < 500 && alive(); ++i) ::usleep(10'000);
    EXPECT_FALSE(alive());
}

TEST(Process, PassesNoDescriptorOfTheEmulatorsAndNoIgnoredSignal) {
    Shell sh;
    const int kept = ::open("/dev/null", O_RDONLY);  // not close-on-exec
    ASSERT_GE(kept, 3);
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    struct sigaction before {};
    ::sigaction(SIGPIPE, &ignore, &before);
    ExitStatus status = Process::start(sh.spec("ls /proc/self/fd | sort -n | tr '\\n' ' '; echo; yes | head -c 1 >/dev/null; "
                                               "grep SigIgn /proc/self/status | cut -f2"))->wait();
    ::sigaction(SIGPIPE, &before, nullptr);
    ::close(kept);
    EXPECT_EQ(status.code, 0);
    const std::string out = read(sh.dir / "out.txt");
    EXPECT_EQ(out.rfind("0 1 2 3 \n", 0), 0u) << out;  // 3: ls's own directory
    // SIGPIPE's bit in the mask of ignored signals (glibc keeps two real-time signals of its own
    // out of reach).
    const unsigned long long ignored = std::stoull(out.substr(out.find('\n') + 1), nullptr, 16);
    EXPECT_EQ(ignored & (1ULL << (SIGPIPE - 1)), 0u) << out;
}

TEST(Process, WaitExitLeavesItUnreapedUntilWait) {
    Shell sh;
    std::unique_ptr<Process> p = Process::start(sh.spec("exit 3"));
    EXPECT_EQ(p->wait_exit().code, 3);
    EXPECT_EQ(::kill(p->pid(), 0), 0);  // a zombie still holds its pid
    EXPECT_EQ(p->wait().code, 3);
    EXPECT_EQ(p->wait().code, 3);
}

TEST(Process, ACommandThatCannotStartThrowsWithTheReason) {
    Shell sh;
    ProcessSpec missing = sh.spec("true");
    missing.argv = {"no-such-command-here"};
    EXPECT_THROW(Process::start(missing), std::runtime_error);
    ProcessSpec no_dir = sh.spec("true");
    no_dir.cwd = sh.dir / "absent";
    try {
        Process::start(no_dir);
        ADD_FAILURE() << "started in a missing directory";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("No such file"), std::string::npos) << e.what();
    }
    ProcessSpec not_executable = sh.spec("true");
    not_executable.argv = {(sh.dir / "out.txt").string()};
    std::ofstream(sh.dir / "out.txt") << "text";
    EXPECT_THROW(Process::start(not_executable), std::runtime_error);
}

// The calling thread's CPUs (none where the system does not say).
cpu_set_t cpu_set_of_this_thread() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof set, &set) != 0) CPU_ZERO(&set);
    return set;
}

int cpus_of_this_thread() {
    const cpu_set_t set = cpu_set_of_this_thread();
    return CPU_COUNT(&set);
}

// A replay's threads run on one CPU (cpu_affinity.h); a process a job starts gets them all.
TEST(Process, AProcessStartedFromThreadsOnOneCpuGetsEveryCpu) {
    if (cpus_of_this_thread() < 2) GTEST_SKIP() << "this machine gives the test one CPU";
    const int all = cpus_of_this_thread();
    Shell sh;
    int pinned = 0, pinned_child_thread = 0, pinned_after = 0, beside = 0;
    bool beside_overlaps = true;
    // On a thread of its own: the test's main thread keeps its CPUs.
    std::thread([&] {
        ASSERT_TRUE(run_threads_on_one_cpu());
        pinned = cpus_of_this_thread();
        const cpu_set_t turns = cpu_set_of_this_thread();
        std::thread([&] { pinned_child_thread = cpus_of_this_thread(); }).join();
        // A thread that takes no turn moves to the other CPUs.
        std::thread([&] {
            EXPECT_TRUE(run_beside_turns());
            beside = cpus_of_this_thread();
            const cpu_set_t now = cpu_set_of_this_thread();
            cpu_set_t both;
            CPU_AND(&both, &now, &turns);
            beside_overlaps = CPU_COUNT(&both) != 0;
        }).join();
        EXPECT_EQ(Process::start(sh.spec("grep Cpus_allowed_list /proc/self/status"))->wait().code, 0);
        pinned_after = cpus_of_this_thread();
    }).join();
    EXPECT_EQ(pinned, 1);
    EXPECT_EQ(pinned_child_thread, 1);  // threads it starts after inherit the one CPU
    EXPECT_EQ(pinned_after, 1);         // the spawn gave it back
    EXPECT_EQ(beside, all - 1);
    EXPECT_FALSE(beside_overlaps);
    std::ifstream status("/proc/self/status");  // the main thread's, never narrowed
    std::string own;
    for (std::string line; std::getline(status, line);) {
        if (line.rfind("Cpus_allowed_list", 0) == 0) own = line;
    }
    ASSERT_FALSE(own.empty());
    EXPECT_EQ(read(sh.dir / "out.txt"), own + "\n") << "the main thread has " << all << " CPUs";
    const std::optional<cpu_set_t> children = children_cpus();
    ASSERT_TRUE(children.has_value());
    EXPECT_EQ(CPU_COUNT(&*children), all);
}

}  // namespace
}  // namespace bai::engine
