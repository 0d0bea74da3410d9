// One process of a job or a node: started in a session of its own (so that killing its group
// takes its children: shells, mpirun's daemons, a framework's workers), its output appended to
// files, its exit waited for by the thread that owns it.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "emulator/engine/shell_words.h"

namespace bai::engine {

struct ProcessSpec {
    std::vector<std::string> argv;  // argv[0] is a path or a name looked up on the PATH of `env`
    Environment env;                // the whole environment
    std::filesystem::path cwd;
    std::filesystem::path stdout_path;  // appended to, created when missing
    std::filesystem::path stderr_path;
};

struct ExitStatus {
    int code = 0;    // the exit code, or 128 + the signal as a shell reports it
    int signal = 0;  // the signal that ended it, 0 when it exited
};

// `name` looked up on the PATH of `env` (/usr/local/bin:/usr/bin:/bin without one), as exec does:
// the first executable file; nullopt when there is none.
std::optional<std::string> find_on_path(const std::string& name, const Environment& env);

class Process {
public:
    // Throws std::runtime_error (with the reason) when it cannot start.
    static std::unique_ptr<Process> start(const ProcessSpec& spec);
    virtual ~Process() = default;
    virtual int pid() const = 0;
    // Blocks until it has exited.
    virtual ExitStatus wait() = 0;
    // Blocks until it has exited, and leaves it unreaped: its pid, and so its process group,
    // stays its own, and kill_group still reaches what it left running in the background
    // (a daemon a command started). wait() reaps it after.
    virtual ExitStatus wait_exit() = 0;
    // Sends `signal` to its whole process group; harmless once it has exited.
    virtual void kill_group(int signal) = 0;
};

// A command run to its end, its output read: stdout and stderr go to files in `scratch` (removed
// after), each read up to 1 MiB. Throws as Process::start when it cannot start.
struct CommandOutput {
    ExitStatus status;
    std::string out;
    std::string err;
};
CommandOutput run_command(const std::vector<std::string>& argv, const Environment& env,
                          const std::filesystem::path& scratch);

// The last line with words of a command's output (what it said of its failure); `none` when it
// has none.
std::string last_line(std::string_view text, std::string_view none = "");

}  // namespace bai::engine
