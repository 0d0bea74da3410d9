#include "scenarios/replay/workload_player.h"

#include <fstream>

#include "emulator/engine/job_run.h"

namespace bai::scenarios {
namespace {

namespace fs = std::filesystem;
using engine::JobOutcome;

// "workload NAME" (spaces around allowed), else nullopt.
std::optional<std::string> workload_name(const std::string& command) {
    size_t start = command.find_first_not_of(' ');
    if (start == std::string::npos || command.compare(start, 9, "workload ") != 0) return std::nullopt;
    std::string name = command.substr(start + 9);
    name.erase(0, name.find_first_not_of(' '));
    name.erase(name.find_last_not_of(' ') + 1);
    if (name.empty() || name.find(' ') != std::string::npos) return std::nullopt;
    return name;
}

}  // namespace

std::optional<JobOutcome> WorkloadPlayer::play(const std::string& command, const engine::WorkloadContext& c) {
    std::optional<std::string> name = workload_name(command);
    if (!name) return std::nullopt;
    auto found = workloads_.find(*name);
    if (found == workloads_.end()) {
        return JobOutcome{JobOutcome::Result::failed, 127, "", "workload " + *name + " is not declared"};
    }
    const Workload& w = found->second;
    int attempt;
    {
        std::lock_guard guard(mutex_);
        attempt = ++attempts_[c.job_id];
    }
    fs::create_directories(c.stdout_file.parent_path());
    std::ofstream out(c.stdout_file, std::ios::app);
    const time::TimePoint start = c.started;
    const size_t slices = w.stdout_lines.size() + 1;
    for (size_t k = 0; k < slices; ++k) {
        time::TimePoint at = start + std::chrono::duration_cast<time::TimePoint::duration>(w.duration * (k + 1)) / slices;
        if (!c.control.sleep_until(c.clock, at)) return JobOutcome{JobOutcome::Result::cancelled, std::nullopt, "", ""};
        if (k < w.stdout_lines.size()) out << w.stdout_lines[k] << "\n" << std::flush;
    }
    if (attempt <= w.fail_first) return JobOutcome{JobOutcome::Result::failed, 1, "", ""};
    for (const auto& [path, text] : w.writes) {
        fs::path file = c.host_file(engine::expand_variables(path, c.environment));
        fs::create_directories(file.parent_path());
        std::ofstream(file, std::ios::trunc) << text;
    }
    if (w.exit_code != 0) return JobOutcome{JobOutcome::Result::failed, w.exit_code, "", ""};
    return JobOutcome{JobOutcome::Result::succeeded, 0, "", ""};
}

int WorkloadPlayer::attempts(const std::string& job_id) const {
    std::lock_guard guard(mutex_);
    auto it = attempts_.find(job_id);
    return it == attempts_.end() ? 0 : it->second;
}

}  // namespace bai::scenarios
