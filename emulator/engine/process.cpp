#include "emulator/engine/process.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/process.hpp>
#include <boost/process/extend.hpp>
#include <cerrno>
#include <mutex>
#include <stdexcept>

namespace bai::engine {
namespace {

namespace bp = boost::process;

class BoostProcess : public Process {
public:
    explicit BoostProcess(bp::child child) : child_(std::move(child)), pid_(child_.id()) {}
    ~BoostProcess() override {
        std::lock_guard guard(mutex_);
        if (!exited_) {
            ::kill(-pid_, SIGKILL);
            std::error_code ec;
            child_.wait(ec);
        }
    }
    int pid() const override { return pid_; }

    ExitStatus wait() override {
        // Waits without reaping first, so that kill_group never signals a recycled pid.
        siginfo_t info{};
        while (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR) {
        }
        std::lock_guard guard(mutex_);
        exited_ = true;
        std::error_code ec;
        child_.wait(ec);
        int raw = child_.native_exit_code();
        if (ec) return {127, 0};
        if (WIFSIGNALED(raw)) return {128 + WTERMSIG(raw), WTERMSIG(raw)};
        return {WEXITSTATUS(raw), 0};
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
        // Once waited for, the pid (and group id) may belong to someone else.
        if (!exited_) ::kill(-pid_, signal);
    }

private:
    std::mutex mutex_;
    bp::child child_;
    int pid_;
    bool exited_ = false;
};

// "NAME=value" strings and the null-terminated array execve takes, built before the fork.
// (Not bp::environment: Boost 1.74's reads past the end of its entries when it looks names up.)
struct EnvironmentBlock {
    std::vector<std::string> entries;
    std::vector<char*> pointers;
    explicit EnvironmentBlock(const Environment& env) {
        for (const auto& [name, value] : env) entries.push_back(std::string(name).append("=").append(value));
        for (std::string& entry : entries) pointers.push_back(entry.data());
        pointers.push_back(nullptr);
    }
};

// The executable: argv[0] as given when it has a '/', else found on the environment's PATH.
std::string executable(const std::string& name, const Environment& env) {
    if (name.find('/') != std::string::npos) return name;
    if (std::optional<std::string> found = find_on_path(name, env)) return *found;
    throw std::runtime_error(name + ": command not found");
}

}  // namespace

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
    std::vector<std::string> args(spec.argv.begin() + 1, spec.argv.end());
    std::error_code ec;
    // Append, not truncate: a node's setup task and a retried job add to their logs.
    const std::string out = spec.stdout_path.string(), err = spec.stderr_path.string();
    EnvironmentBlock env(spec.env);
    bp::child child(
        bp::exe = executable(spec.argv[0], spec.env), bp::args = args, bp::start_dir = spec.cwd.string(),
        bp::std_in < bp::null, bp::extend::on_exec_setup = [&out, &err, &env](auto& exec) {
            // In the child between fork and exec: only async-signal-safe calls.
            exec.env = env.pointers.data();
            ::setsid();
            int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
            int e = out == err ? o : ::open(err.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
            if (o < 0 || e < 0) ::_exit(126);
            ::dup2(o, 1);
            ::dup2(e, 2);
            // Nothing else of the emulator's passes to a job (sockets, the database, its log
            // files; a file it keeps open on one of its own FUSE mounts would tie the two
            // together at exit): every other descriptor closes at exec.
            ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
        },
        ec);
    if (ec) throw std::runtime_error("cannot start " + spec.argv[0] + ": " + ec.message());
    return std::make_unique<BoostProcess>(std::move(child));
}

}  // namespace bai::engine
