#include "emulator/engine/slurm_commands.h"

#include <charconv>
#include <cstdio>
#include <stdexcept>

#include "emulator/engine/docker_client.h"
#include "emulator/engine/node_hosts.h"
#include "emulator/engine/shell_words.h"

namespace bai::engine {
namespace {

// FNV-1a, 64 bits: stable across builds and machines (std::hash is neither promised).
std::uint64_t fnv1a(std::string_view text, std::uint64_t hash = 14695981039346656037ULL) {
    for (unsigned char c : text) {
        hash ^= c;
        hash *= 1099511628211ULL;
    }
    return hash;
}

bool all_digits(std::string_view text) {
    if (text.empty()) return false;
    for (char c : text) {
        if (c < '0' || c > '9') return false;
    }
    return true;
}

std::vector<std::string_view> split(std::string_view text, char separator) {
    std::vector<std::string_view> parts;
    size_t start = 0;
    while (true) {
        const size_t end = text.find(separator, start);
        parts.push_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
        if (end == std::string_view::npos) return parts;
        start = end + 1;
    }
}

}  // namespace

std::string slurm_instance_id(const std::filesystem::path& data_dir, long long created_ns) {
    const std::uint64_t hash = fnv1a(std::to_string(created_ns), fnv1a(data_dir.lexically_normal().string()));
    char out[16];
    std::snprintf(out, sizeof out, "bai%08x", static_cast<unsigned>(hash ^ (hash >> 32)));
    return out;
}

std::string holder_name(const SlurmSettings& settings, const std::string& node_id) {
    return settings.instance + "-" + node_id;
}

std::optional<std::string> node_of_holder(const SlurmSettings& settings, std::string_view job_name) {
    const std::string prefix = settings.instance + "-";
    if (settings.instance.empty() || job_name.size() <= prefix.size() || job_name.substr(0, prefix.size()) != prefix) {
        return std::nullopt;
    }
    return std::string(job_name.substr(prefix.size()));
}

std::vector<std::string> sbatch_argv(const SlurmSettings& settings, const HolderAsk& ask) {
    if (ask.cores < 1) throw std::invalid_argument("a node needs at least one core (vmSize)");
    std::vector<std::string> argv{"sbatch",
                                  "--parsable",
                                  "--no-requeue",
                                  "--job-name=" + holder_name(settings, ask.node_id),
                                  "--comment=bai:" + settings.instance + ":" + ask.cluster_key,
                                  "--nodes=1",
                                  "--ntasks=1",
                                  "--cpus-per-task=" + std::to_string(ask.cores)};
    if (ask.memory_mib > 0) argv.push_back("--mem=" + std::to_string(ask.memory_mib));
    if (ask.gpus > 0) argv.push_back("--gres=gpu:" + std::to_string(ask.gpus));
    const std::string& partition =
        ask.low_priority && !settings.lowpriority_partition.empty() ? settings.lowpriority_partition : settings.partition;
    if (!partition.empty()) argv.push_back("--partition=" + partition);
    if (!settings.account.empty()) argv.push_back("--account=" + settings.account);
    if (ask.low_priority && !settings.lowpriority_qos.empty()) argv.push_back("--qos=" + settings.lowpriority_qos);
    if (settings.shares_disk) {
        argv.push_back("--output=" + (settings.log_dir / (ask.node_id + ".holder.log")).string());
    } else {  // DIR is not there on the host
        argv.insert(argv.end(), {"--output=/dev/null", "--chdir=/"});
    }
    argv.insert(argv.end(), {"--wrap", holder_script(settings)});
    return argv;
}

std::string holder_script(const SlurmSettings& settings) {
    if (settings.docker_owner.empty()) return "exec sleep infinity";
    const std::string owner = shell_quote(std::string(kOwnerLabel) + "=" + settings.docker_owner);
    const std::string allocation = kAllocationLabel;
    // The sweep reads the jobs Slurm runs once, and only when that answer lists this holder (a
    // controller that does not answer must not make live containers look orphaned). The trap
    // stays within Slurm's default KillWait (30 s). (`sleep & wait`: a shell in a foreground
    // sleep would run its trap only once the sleep ends.)
    return "owner=" + owner +
           "\n"
           "ours() { timeout 10 docker ps --all --quiet --filter \"label=$owner\" \"$@\" 2>/dev/null; }\n"
           "if command -v docker >/dev/null 2>&1; then\n"
           "  if command -v squeue >/dev/null 2>&1 &&\n"
           "     live=$(squeue --noheader --states=RUNNING,COMPLETING,SUSPENDED --format=%i 2>/dev/null) &&\n"
           "     printf '%s\\n' $live | grep -qx \"$SLURM_JOB_ID\"; then\n"
           "    for id in $(ours); do\n"
           "      held=$(timeout 10 docker inspect --format '{{index .Config.Labels \"" + allocation + "\"}}' \"$id\" 2>/dev/null)\n"
           "      if [ -n \"$held\" ] && ! printf '%s\\n' $live | grep -qx \"$held\"; then\n"
           "        timeout 10 docker rm --force \"$id\" >/dev/null 2>&1\n"
           "      fi\n"
           "    done\n"
           "  fi\n"
           "  trap 'ids=$(ours --filter \"label=" + allocation + "=$SLURM_JOB_ID\"); [ -z \"$ids\" ] || timeout 15 docker rm --force $ids >/dev/null 2>&1; exit 0' TERM\n"
           "fi\n"
           "sleep infinity &\n"
           "wait\n";
}

std::optional<std::string> parse_sbatch_answer(std::string_view answer) {
    while (!answer.empty() && (answer.back() == '\n' || answer.back() == '\r' || answer.back() == ' ')) answer.remove_suffix(1);
    const std::string_view id = answer.substr(0, answer.find(';'));
    if (!all_digits(id)) return std::nullopt;
    return std::string(id);
}

std::vector<std::string> squeue_argv() {
    return {"squeue", "--noheader", "--states=all", "--format=%i|%j|%T|%N|%r"};
}

std::vector<HolderState> parse_squeue(const SlurmSettings& settings, std::string_view output) {
    std::vector<HolderState> out;
    for (std::string_view line : split(output, '\n')) {
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        const std::vector<std::string_view> fields = split(line, '|');
        if (fields.size() != 5 || !all_digits(fields[0])) continue;
        std::optional<std::string> node = node_of_holder(settings, fields[1]);
        if (!node) continue;
        out.push_back({std::string(fields[0]), *node, std::string(fields[2]), std::string(fields[3]), std::string(fields[4])});
    }
    return out;
}

HolderFate fate_of(std::string_view state) {
    // squeue may add a suffix to a state ("CANCELLED by 0"): the first word decides.
    state = state.substr(0, state.find(' '));
    if (state == "RUNNING" || state == "COMPLETING" || state == "SUSPENDED" || state == "STOPPED" || state == "SIGNALING") {
        return HolderFate::held;
    }
    if (state == "PREEMPTED") return HolderFate::preempted;
    if (state == "NODE_FAIL" || state == "BOOT_FAIL") return HolderFate::failed;
    if (state == "PENDING" || state == "CONFIGURING" || state == "REQUEUED" || state == "REQUEUE_HOLD" ||
        state == "REQUEUE_FED" || state == "RESIZING" || state == "RESV_DEL_HOLD") {
        return HolderFate::waiting;
    }
    return HolderFate::released;  // CANCELLED, COMPLETED, FAILED, TIMEOUT, DEADLINE, OUT_OF_MEMORY, SPECIAL_EXIT...
}

std::string holder_loss_text(const HolderState& holder) {
    return "Slurm job " + holder.job_id + " " + holder.state +
           (holder.reason.empty() || holder.reason == "None" ? "" : " (" + holder.reason + ")");
}

std::vector<std::string> srun_prefix(const std::string& holder_job, const std::string& step_name,
                                     const std::filesystem::path& cwd, int gpus) {
    // --mpi=none: a cluster whose MpiDefault is pmix would otherwise give the step PMIx's
    // variables, and the job's own mpirun would take itself for a rank that srun started.
    // The process then drops what srun put in its environment (SLURM_*, PMI*_): it runs as on
    // a Batch AI node, and an mpirun or a framework that reads them (SLURM_JOB_ID, SLURM_PROCID)
    // does not take the holder's one-task allocation for the job's.
    std::vector<std::string> argv{"srun", "--jobid=" + holder_job, "--overlap", "--nodes=1", "--ntasks=1", "--mpi=none"};
    if (gpus > 0) argv.push_back("--gres=gpu:" + std::to_string(gpus));
    argv.insert(argv.end(),
                {"--export=ALL", "--job-name=" + step_name, "--chdir=" + cwd.string(), "--quiet", "--", "/bin/sh", "-c",
                 "unset $(awk 'BEGIN { for (v in ENVIRON) if (v ~ /^(SLURM|PMIX|PMI)_[A-Za-z0-9_]*$/) print v }'); exec \"$@\"",
                 "bai-node"});
    return argv;
}

std::vector<std::string> scontrol_node_argv(const std::string& host) {
    return {"scontrol", "show", "node", "--oneliner", host};
}

std::optional<std::string> parse_node_address(std::string_view output) {
    std::string name, address;
    for (std::string_view field : split(output.substr(0, output.find('\n')), ' ')) {
        if (field.substr(0, 9) == "NodeName=") name = std::string(field.substr(9));
        if (field.substr(0, 9) == "NodeAddr=") address = std::string(field.substr(9));
    }
    if (name.empty()) return std::nullopt;
    return address.empty() ? name : address;
}

bool parse_node_unresponsive(std::string_view output) {
    for (std::string_view field : split(output.substr(0, output.find('\n')), ' ')) {
        if (field.substr(0, 6) != "State=") continue;
        const std::string_view state = field.substr(6);
        return state.find("NOT_RESPONDING") != std::string_view::npos || state.find("DOWN") != std::string_view::npos ||
               state.find("FAIL") != std::string_view::npos || (!state.empty() && state.back() == '*');
    }
    return false;
}

std::vector<std::string> squeue_steps_argv(const std::string& holder_job) {
    return {"squeue", "--steps", "--noheader", "--jobs=" + holder_job, "--format=%i %j"};
}

std::vector<std::string> parse_steps(const std::string& holder_job, std::string_view output) {
    std::vector<std::string> steps;
    const std::string prefix = holder_job + ".";
    for (std::string_view line : split(output, '\n')) {
        while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.remove_suffix(1);
        while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
        if (line.size() <= prefix.size() || line.substr(0, prefix.size()) != prefix) continue;
        const size_t space = line.find(' ');
        const std::string_view step = line.substr(prefix.size(), space == std::string_view::npos ? std::string_view::npos : space - prefix.size());
        if (space != std::string_view::npos) {
            std::string_view name = line.substr(space + 1);
            while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
            if (name.substr(0, std::string_view(kNodeStepPrefix).size()) == kNodeStepPrefix) continue;
        }
        if (all_digits(step)) steps.emplace_back(step);  // not "batch", "extern", "interactive"
    }
    return steps;
}

std::vector<std::string> scancel_step_argv(const std::string& holder_job, const std::string& step_id) {
    return {"scancel", "--signal=KILL", holder_job + "." + step_id};
}

std::vector<std::string> scancel_argv(const std::vector<std::string>& holder_jobs) {
    std::vector<std::string> argv{"scancel"};
    argv.insert(argv.end(), holder_jobs.begin(), holder_jobs.end());
    return argv;
}

}  // namespace bai::engine
