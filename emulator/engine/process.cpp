#include "emulator/engine/process.h"

#include <algorithm>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <stdexcept>

#include "emulator/engine/cpu_affinity.h"

namespace bai::engine {
namespace {

// Started with posix_spawn, which glibc runs as clone(CLONE_VM | CLONE_VFORK): the child shares
// the emulator's memory until it execs. A fork would copy the page tables of the whole emulator
// for every task, and tasks start by the thousand (a Batch job's) while the emulator holds
// hundreds of MiB.
class SpawnedProcess : public Process {
public:
    explicit SpawnedProcess(pid_t pid) : pid_(pid) {}
    ~SpawnedProcess() override {
        std::lock_guard guard(mutex_);
        if (!reaped_) {
            ::kill(-pid_, SIGKILL);
            reap();
        }
    }
    int pid() const override { return pid_; }

    ExitStatus wait() override {
        // Waits without reaping first, so that kill_group never signals a recycled pid.
        wait_exit();
        std::lock_guard guard(mutex_);
        if (reaped_) return status_;
        reaped_ = true;
        const int raw = reap();
        if (raw < 0) return status_ = {127, 0};
        if (WIFSIGNALED(raw)) return status_ = {128 + WTERMSIG(raw), WTERMSIG(raw)};
        return status_ = {WEXITSTATUS(raw), 0};
    }

    ExitStatus wait_exit() override {
        siginfo_t info{};
        while (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR) {
        }
        if (info.si_code == CLD_EXITED) return {info.si_status, 0};
        return {128 + info.si_status, info.si_status};
    }

    void kill_group(int signal) override {
        std::lock_guard guard(mutex_);
        // Once reaped, the pid (and group id) may belong to someone else.
        if (!reaped_) ::kill(-pid_, signal);
    }

private:
    // The wait status, or -1 when there is none to have.
    int reap() {
        int raw = 0;
        while (::waitpid(pid_, &raw, 0) < 0) {
            if (errno != EINTR) return -1;
        }
        return raw;
    }

    std::mutex mutex_;
    pid_t pid_;
    bool reaped_ = false;
    ExitStatus status_;
};

// "NAME=value" strings and the null-terminated array execve takes.
struct EnvironmentBlock {
    std::vector<std::string> entries;
    std::vector<char*> pointers;
    explicit EnvironmentBlock(const Environment& env) {
        for (const auto& [name, value] : env) entries.push_back(std::string(name).append("=").append(value));
        for (std::string& entry : entries) pointers.push_back(entry.data());
        pointers.push_back(nullptr);
    }
};

// What the child does before it execs, in order: into its directory, stdin from /dev/null,
// stdout and stderr appended to their files (created when missing), and every other
// descriptor closed: nothing else of the emulator's passes to a job (sockets, the database,
// its log files; a file it keeps open on one of its own FUSE mounts would tie the two
// together at exit).
class FileActions {
public:
    explicit FileActions(const ProcessSpec& spec) {
        ::posix_spawn_file_actions_init(&actions_);
        // Append, not truncate: a node's setup task and a retried job add to their logs.
        const int append = O_WRONLY | O_CREAT | O_APPEND;
        const std::string out = spec.stdout_path.string(), err = spec.stderr_path.string();
        if (!spec.cwd.empty()) check(::posix_spawn_file_actions_addchdir_np(&actions_, spec.cwd.c_str()));
        check(::posix_spawn_file_actions_addopen(&actions_, 0, "/dev/null", O_RDONLY, 0));
        check(::posix_spawn_file_actions_addopen(&actions_, 1, out.c_str(), append, 0644));
        if (err == out) {
            check(::posix_spawn_file_actions_adddup2(&actions_, 1, 2));
        } else {
            check(::posix_spawn_file_actions_addopen(&actions_, 2, err.c_str(), append, 0644));
        }
        check(::posix_spawn_file_actions_addclosefrom_np(&actions_, 3));
    }
    ~FileActions() { ::posix_spawn_file_actions_destroy(&actions_); }
    FileActions(const FileActions&) = delete;
    FileActions& operator=(const FileActions&) = delete;
    const posix_spawn_file_actions_t* get() const { return &actions_; }

private:
    static void check(int rc) {
        if (rc != 0) throw std::runtime_error(std::string("cannot prepare a process: ") + std::strerror(rc));
    }
    posix_spawn_file_actions_t actions_;
};

// A session of its own (its group is the one kill_group signals), no signal blocked, every
// signal's disposition the default: what the emulator's threads block or ignore is not the
// job's business (a shell pipeline needs SIGPIPE).
class SpawnAttributes {
public:
    SpawnAttributes() {
        ::posix_spawnattr_init(&attr_);
        sigset_t none, all;
        ::sigemptyset(&none);
        ::sigfillset(&all);
        ::posix_spawnattr_setsigmask(&attr_, &none);
        ::posix_spawnattr_setsigdefault(&attr_, &all);
        ::posix_spawnattr_setflags(&attr_, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    }
    ~SpawnAttributes() { ::posix_spawnattr_destroy(&attr_); }
    SpawnAttributes(const SpawnAttributes&) = delete;
    SpawnAttributes& operator=(const SpawnAttributes&) = delete;
    const posix_spawnattr_t* get() const { return &attr_; }

private:
    posix_spawnattr_t attr_;
};

// The executable: argv[0] as given when it has a '/', else found on the environment's PATH.
std::string executable(const std::string& name, const Environment& env) {
    if (name.find('/') != std::string::npos) return name;
    if (std::optional<std::string> found = find_on_path(name, env)) return *found;
    throw std::runtime_error(name + ": command not found");
}

}  // namespace

CommandOutput run_command(const std::vector<std::string>& argv, const Environment& env,
                          const std::filesystem::path& scratch) {
    std::string pattern = (scratch / "bai-command-XXXXXX").string();
    const int fd = ::mkstemp(pattern.data());
    if (fd < 0) throw std::runtime_error("cannot make a file in " + scratch.string() + ": " + std::strerror(errno));
    ::close(fd);
    const std::filesystem::path out = pattern, err = pattern + ".err";
    auto read_and_remove = [](const std::filesystem::path& path) {
        std::string text;
        if (FILE* f = std::fopen(path.c_str(), "rb")) {
            text.resize(1 << 20);
            text.resize(std::fread(text.data(), 1, text.size(), f));
            std::fclose(f);
        }
        std::error_code ec;
        std::filesystem::remove(path, ec);
        return text;
    };
    CommandOutput result;
    try {
        result.status = Process::start({argv, env, scratch, out, err})->wait();
    } catch (...) {
        read_and_remove(out);
        read_and_remove(err);
        throw;
    }
    result.out = read_and_remove(out);
    result.err = read_and_remove(err);
    return result;
}

std::optional<std::string> find_on_path(const std::string& name, const Environment& env) {
    auto path = env.find("PATH");
    const std::string dirs = path == env.end() ? "/usr/local/bin:/usr/bin:/bin" : path->second;
    for (size_t start = 0; start <= dirs.size();) {
        size_t end = std::min(dirs.find(':', start), dirs.size());
        std::string candidate = dirs.substr(start, end - start) + "/" + name;
        if (::access(candidate.c_str(), X_OK) == 0) return candidate;
        start = end + 1;
    }
    return std::nullopt;
}

std::unique_ptr<Process> Process::start(const ProcessSpec& spec) {
    if (spec.argv.empty()) throw std::invalid_argument("no command");
    const std::string exe = executable(spec.argv[0], spec.env);
    std::vector<std::string> args(spec.argv);
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    EnvironmentBlock env(spec.env);
    FileActions actions(spec);
    SpawnAttributes attributes;
    pid_t pid = 0;
    // posix_spawn's child starts on its calling thread's CPUs: where the emulator's threads run
    // on fewer than it was given (cpu_affinity.h), the thread widens its own for the spawn.
    const std::optional<cpu_set_t> wider = children_cpus();
    cpu_set_t own;
    const bool widened = wider && ::sched_getaffinity(0, sizeof own, &own) == 0 && !CPU_EQUAL(&own, &*wider) &&
                         ::sched_setaffinity(0, sizeof *wider, &*wider) == 0;
    // The child's failures before exec (its directory, its log files, the executable) come back
    // here as the error.
    const int rc = ::posix_spawn(&pid, exe.c_str(), actions.get(), attributes.get(), argv.data(), env.pointers.data());
    if (widened) ::sched_setaffinity(0, sizeof own, &own);
    if (rc != 0) throw std::runtime_error("cannot start " + spec.argv[0] + ": " + std::strerror(rc));
    return std::make_unique<SpawnedProcess>(pid);
}

std::string last_line(std::string_view text, std::string_view none) {
    std::string_view last;
    while (!text.empty()) {
        const size_t end = std::min(text.find('\n'), text.size());
        if (end > 0) last = text.substr(0, end);
        text.remove_prefix(std::min(end + 1, text.size()));
    }
    return std::string(last.empty() ? none : last);
}

}  // namespace bai::engine
