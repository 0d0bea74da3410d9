#include "scenarios/replay/workload_player.h"

#include <sstream>
#include <vector>

#include <fstream>

#include "emulator/engine/job_run.h"

namespace bai::scenarios {
namespace {

namespace fs = std::filesystem;
using engine::JobOutcome;

// NAME when the command ends with the words "workload NAME": customToolkitSettings'
// "workload NAME", or another toolkit's script named workload with the argument NAME ("python
// workload NAME", "mpirun ... bash -c 'python workload NAME'").
std::optional<std::string> workload_name(const std::string& command) {
    std::vector<std::string> words;
    std::istringstream in(command);
    for (std::string word; in >> word;) {
        std::erase_if(word, [](char ch) { return ch == '\'' || ch == '"'; });  // "bash -c 'python workload hvd'"
        words.push_back(word);
    }
    if (words.size() < 2 || words[words.size() - 2] != "workload") return std::nullopt;
    if (words.size() > 2 && words[words.size() - 3].find("python") == std::string::npos) return std::nullopt;
    return words.back();
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
        // As a real program would: a write that fails (a storage outage, a full disk) fails it.
        std::string expanded = engine::expand_variables(path, c.environment);
        fs::path file = c.host_file(expanded);
        std::error_code ec;
        fs::create_directories(file.parent_path(), ec);
        std::ofstream written(file, std::ios::trunc);
        written << text;
        written.close();
        if (ec || !written) {
            out << "workload " << *name << ": cannot write " << expanded << "\n" << std::flush;
            return JobOutcome{JobOutcome::Result::failed, 1, "", ""};
        }
    }
    if (w.exit_code != 0) return JobOutcome{JobOutcome::Result::failed, w.exit_code, "", ""};
    return JobOutcome{JobOutcome::Result::succeeded, 0, "", ""};
}

bool WorkloadPlayer::plays(const std::string& command) const { return workload_name(command).has_value(); }

int WorkloadPlayer::attempts(const std::string& job_id) const {
    std::lock_guard guard(mutex_);
    auto it = attempts_.find(job_id);
    return it == attempts_.end() ? 0 : it->second;
}

}  // namespace bai::scenarios
