#include "emulator/engine/slurm_hosts.h"

#include <stdexcept>
#include <string_view>

#include "common/log/logger.h"
#include "emulator/engine/shell_words.h"
#include "emulator/engine/slurm_gpus.h"

namespace bai::engine {

namespace {

// What a holder's fate means for its node: nullopt while the holder has (or waits for) its host.
std::optional<HostLoss> loss_of(HolderFate fate) {
    switch (fate) {
        case HolderFate::held:
        case HolderFate::waiting: return std::nullopt;
        case HolderFate::preempted: return HostLoss::preempted;
        case HolderFate::failed: return HostLoss::failed;
        case HolderFate::released: return HostLoss::released;
    }
    return std::nullopt;
}

}  // namespace

SlurmHosts::SlurmHosts(SlurmSettings settings, Environment env, std::chrono::milliseconds poll)
    : settings_(std::move(settings)), env_(std::move(env)), poll_every_(poll) {}

SlurmHosts::~SlurmHosts() { stop(); }

CommandOutput SlurmHosts::slurm(const std::vector<std::string>& argv) const {
    return run_command(argv, env_, settings_.log_dir);
}

void SlurmHosts::start() {
    std::error_code ec;
    std::filesystem::create_directories(settings_.log_dir, ec);
    if (ec) throw std::runtime_error("cannot make " + settings_.log_dir.string() + ": " + ec.message());
    // What a previous run of this data directory left held: given back (slurm.md, "Restart").
    const CommandOutput listed = slurm(squeue_argv());
    if (listed.status.code != 0) throw std::runtime_error("squeue failed: " + listed.err);
    std::vector<std::string> left;
    for (const HolderState& h : parse_squeue(settings_, listed.out)) {
        const HolderFate fate = fate_of(h.state);
        if (fate == HolderFate::waiting || fate == HolderFate::held) left.push_back(h.job_id);
    }
    if (!left.empty()) {
        log::info("slurm: cancelling " + std::to_string(left.size()) + " holder(s) a previous run left");
        slurm(scancel_argv(left));
    }
    std::lock_guard guard(mutex_);
    stopping_ = false;
    poller_ = std::thread([this] { poll_loop(); });
}

void SlurmHosts::stop() {
    std::vector<std::string> held;
    {
        std::lock_guard guard(mutex_);
        if (!poller_.joinable()) return;
        stopping_ = true;
        for (const auto& [node, h] : holders_) held.push_back(h.job_id);
        holders_.clear();
    }
    changed_.notify_all();
    poller_.join();
    if (!held.empty()) slurm(scancel_argv(held));
}

std::optional<HostGrant> SlurmHosts::acquire(const Node& node, const ClusterSpec& spec, RunControl& control) {
    // Cores, memory and GPUs as the vmSize has them, or as the site's size map says.
    const HostSize size = host_size(settings_.sizes, spec.vm_size);
    const HolderAsk ask{node.id, node.cluster_key, size.cores, size.memory_mib, size.gpus, node.low_priority};
    const CommandOutput submitted = slurm(sbatch_argv(settings_, ask));
    std::optional<std::string> job = parse_sbatch_answer(submitted.out);
    if (submitted.status.code != 0 || !job) {
        throw std::runtime_error("sbatch refused the node's allocation: " + submitted.err.substr(0, submitted.err.find('\n')));
    }
    {
        std::lock_guard guard(mutex_);
        holders_[node.id] = Holder{*job, "", "", "", false, false, size.gpus};
        poll_now_ = true;
    }
    changed_.notify_all();
    std::unique_lock lock(mutex_);
    while (true) {
        auto it = holders_.find(node.id);
        if (it == holders_.end() || stopping_) return std::nullopt;  // released meanwhile
        if (control.cancelled()) {
            holders_.erase(it);
            lock.unlock();
            slurm(scancel_argv({*job}));
            return std::nullopt;
        }
        const Holder& h = it->second;
        const HolderFate fate = h.state.empty() ? HolderFate::waiting : fate_of(h.state);
        if (fate == HolderFate::held && !h.host.empty()) {
            it->second.granted = true;
            const std::string host = h.host;
            lock.unlock();
            const CommandOutput shown = slurm(scontrol_node_argv(host));
            HostGrant grant{parse_node_address(shown.out).value_or(host), {}};
            if (size.gpus > 0) {
                for (const Gpu& gpu : gpus_of(*job, host, size.gpus)) {
                    grant.gpus.push_back(gpu.uuid);
                    if (gpu.minor >= 0) grant.gpu_devices.push_back("/dev/nvidia" + std::to_string(gpu.minor));
                }
            }
            return grant;
        }
        if (fate != HolderFate::waiting && fate != HolderFate::held) {
            const std::string why = h.state + (h.reason.empty() || h.reason == "None" ? "" : " (" + h.reason + ")");
            holders_.erase(it);
            throw std::runtime_error("Slurm ended the node's allocation (job " + *job + ") before it ran: " + why);
        }
        changed_.wait_for(lock, std::chrono::milliseconds(100));
    }
}

std::vector<Gpu> SlurmHosts::gpus_of(const std::string& job, const std::string& host, int count) const {
    const std::string where = "the GPUs of Slurm job " + job + " on " + host;
    const CommandOutput detail = slurm(scontrol_job_argv(job));
    if (detail.status.code != 0) throw std::runtime_error(where + ": scontrol: " + detail.err.substr(0, detail.err.find('\n')));
    std::vector<std::string> argv = srun_prefix(job, "gpus", "/", count);
    for (std::string& word : gpu_query_argv()) argv.push_back(std::move(word));
    const CommandOutput listed = slurm(argv);
    if (listed.status.code != 0) {
        const std::string& said = listed.err.empty() ? listed.out : listed.err;
        throw std::runtime_error(where + " cannot be read: nvidia-smi there: " + said.substr(0, said.find('\n')));
    }
    try {
        std::vector<Gpu> gpus = allocated_gpus(parse_gpu_query(listed.out), parse_gres_indexes(detail.out), count);
        std::string uuids;
        for (const Gpu& g : gpus) uuids += (uuids.empty() ? "" : ",") + g.uuid;
        log::info("slurm: job " + job + " on " + host + " holds GPU(s) " + uuids);
        return gpus;
    } catch (const std::exception& e) {
        throw std::runtime_error(where + ": " + e.what());
    }
}

std::vector<std::string> SlurmHosts::launch_prefix(const std::string& node_id, const std::string& step,
                                                   const std::filesystem::path& cwd) {
    std::lock_guard guard(mutex_);
    auto it = holders_.find(node_id);
    if (it == holders_.end() || !it->second.granted) throw std::runtime_error("node " + node_id + " has no Slurm allocation");
    // A node's process starts from the node's environment, which has none of the emulator's:
    // srun gets the Slurm variables the emulator was given (SLURM_CONF, ...) through env(1).
    std::vector<std::string> argv{"env"};
    for (const auto& [name, value] : env_) {
        if (name.rfind("SLURM_", 0) == 0) argv.push_back(name + "=" + value);
    }
    const std::vector<std::string> srun = srun_prefix(it->second.job_id, step, cwd, it->second.gpus);
    argv.insert(argv.end(), srun.begin(), srun.end());
    return argv;
}

std::optional<HostLoss> SlurmHosts::lost(const std::string& node_id) {
    std::string job, host;
    {
        std::lock_guard guard(mutex_);
        auto it = holders_.find(node_id);
        if (it == holders_.end()) return HostLoss::released;
        job = it->second.job_id;
        host = it->second.host;
    }
    HostLoss loss = HostLoss::released;  // gone from squeue
    std::string why = "its Slurm job " + job + " is gone";
    // While the host does not answer (a slurmd that died: its steps' sruns fail before Slurm
    // calls the host down, after SlurmdTimeout; Slurm itself says NOT_RESPONDING only after its
    // next ping, and a step started there fails), the answer waits for Slurm's verdict.
    const auto deadline = std::chrono::steady_clock::now() + kUnresponsiveWait;
    for (;;) {
        const CommandOutput listed = slurm(squeue_argv());
        if (listed.status.code != 0) return std::nullopt;  // no answer: nothing is known to be lost
        std::optional<HolderState> seen;
        for (HolderState& h : parse_squeue(settings_, listed.out)) {
            if (h.job_id == job) seen = std::move(h);
        }
        if (!seen) break;
        if (const std::optional<HostLoss> seen_loss = loss_of(fate_of(seen->state))) {
            loss = *seen_loss;
            why = holder_loss_text(*seen);
            break;
        }
        if (host.empty() || std::chrono::steady_clock::now() > deadline) return std::nullopt;
        if (!parse_node_unresponsive(slurm(scontrol_node_argv(host)).out)) {
            std::vector<std::string> probe{"timeout", "10"};
            for (std::string& word : srun_prefix(job, std::string(kNodeStepPrefix) + "probe", "/")) probe.push_back(std::move(word));
            probe.push_back("true");
            if (slurm(probe).status.code == 0) return std::nullopt;  // it answers: what failed was the job's
        }
        std::unique_lock lock(mutex_);
        if (changed_.wait_for(lock, std::chrono::seconds(1), [this] { return stopping_; })) return std::nullopt;
    }
    // Reported here, as the poll would: the engine hears of the loss before it hears that the
    // node's job stopped for it, so the job is never placed on that node again.
    bool report = false;
    {
        std::lock_guard guard(mutex_);
        auto it = holders_.find(node_id);
        if (it != holders_.end() && it->second.job_id == job && it->second.granted && !it->second.lost) {
            it->second.lost = true;
            report = true;
        }
    }
    if (report) {
        log::info("slurm: node " + node_id + " lost: " + why);
        if (on_loss) on_loss(node_id, loss, why);
    }
    return loss;
}

void SlurmHosts::kill_processes(const std::string& node_id) {
    std::string job;
    {
        std::lock_guard guard(mutex_);
        auto it = holders_.find(node_id);
        if (it == holders_.end() || !it->second.granted) return;
        job = it->second.job_id;
    }
    // A SIGKILL to an srun client leaves its step running: the steps themselves are cancelled.
    for (const std::string& step : parse_steps(job, slurm(squeue_steps_argv(job)).out)) slurm(scancel_step_argv(job, step));
}

std::optional<NodeHosts::Placement> SlurmHosts::placement(const std::string& node_id) const {
    std::lock_guard guard(mutex_);
    auto it = holders_.find(node_id);
    if (it == holders_.end() || !it->second.granted) return std::nullopt;
    return Placement{it->second.host, it->second.job_id};
}

void SlurmHosts::release(const std::string& node_id) {
    std::string job;
    {
        std::lock_guard guard(mutex_);
        auto it = holders_.find(node_id);
        if (it == holders_.end()) return;
        job = it->second.job_id;
        holders_.erase(it);
    }
    changed_.notify_all();
    slurm(scancel_argv({job}));
}

void SlurmHosts::copy_to_host(const std::string& node_id, const std::vector<std::filesystem::path>& paths) {
    if (settings_.shares_disk || paths.empty()) return;
    // A tar of the paths (each itself, relative to /) made here, piped into a step that unpacks it
    // there (srun forwards its stdin to the step).
    std::vector<std::string> unpack = launch_prefix(node_id, std::string(kNodeStepPrefix) + "copy", "/");
    unpack.insert(unpack.end(), {"tar", "-C", "/", "-xpf", "-"});
    std::string pipeline = "set -o pipefail; tar -C / --no-recursion -cf -";
    for (const std::filesystem::path& path : paths) pipeline += " " + shell_quote(path.lexically_normal().relative_path().string());
    pipeline += " |";
    for (const std::string& word : unpack) pipeline += " " + shell_quote(word);
    const CommandOutput done = run_command({"/bin/bash", "-c", pipeline}, env_, settings_.log_dir);
    if (done.status.code != 0) throw std::runtime_error("cannot copy what the node needs to its host: " + last_line(done.err, "(no output)"));
}

void SlurmHosts::remove_from_host(const std::string& node_id, const std::filesystem::path& path) {
    if (settings_.shares_disk || path.lexically_normal().relative_path().empty()) return;
    {
        std::lock_guard guard(mutex_);
        auto it = holders_.find(node_id);
        if (it == holders_.end() || !it->second.granted || it->second.lost) return;  // the host is gone with it
    }
    try {
        std::vector<std::string> argv = launch_prefix(node_id, std::string(kNodeStepPrefix) + "remove", "/");
        argv.insert(argv.end(), {"rm", "-rf", "--one-file-system", "--", path.string()});
        const CommandOutput done = run_command(argv, env_, settings_.log_dir);
        if (done.status.code != 0) {
            log::warning("slurm: cannot remove " + path.string() + " on the host of " + node_id + ": " + last_line(done.err, "(no output)"));
        }
    } catch (const std::exception& e) {
        log::warning("slurm: cannot remove " + path.string() + " on the host of " + node_id + ": " + e.what());
    }
}

void SlurmHosts::poll_loop() {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
        if (!holders_.empty()) {
            poll_now_ = false;
            lock.unlock();
            try {
                poll_once();
            } catch (const std::exception& e) {
                log::warning(std::string("slurm: the poll failed: ") + e.what());
            }
            lock.lock();
        }
        changed_.wait_for(lock, poll_every_, [this] { return stopping_ || poll_now_; });
        poll_now_ = false;
    }
}

void SlurmHosts::poll_once() {
    const CommandOutput listed = slurm(squeue_argv());
    if (listed.status.code != 0) throw std::runtime_error("squeue failed: " + listed.err.substr(0, listed.err.find('\n')));
    std::map<std::string, HolderState> by_job;
    for (HolderState& h : parse_squeue(settings_, listed.out)) by_job[h.job_id] = std::move(h);
    struct Loss {
        std::string node;
        HostLoss loss;
        std::string why;
    };
    std::vector<Loss> losses;
    {
        std::lock_guard guard(mutex_);
        for (auto& [node, h] : holders_) {
            auto seen = by_job.find(h.job_id);
            if (seen == by_job.end()) {
                // Gone from squeue (past MinJobAge, or never listed yet): ended if it had been given.
                if (h.granted && !h.lost) {
                    h.lost = true;
                    losses.push_back({node, HostLoss::released, "its Slurm job " + h.job_id + " is gone"});
                }
                continue;
            }
            h.state = seen->second.state;
            h.host = seen->second.host;
            h.reason = seen->second.reason;
            if (!h.granted || h.lost) continue;
            if (std::optional<HostLoss> loss = loss_of(fate_of(h.state))) {
                losses.push_back({node, *loss, holder_loss_text(seen->second)});
                h.lost = true;
            }
        }
    }
    changed_.notify_all();
    for (const Loss& l : losses) {
        log::info("slurm: node " + l.node + " lost: " + l.why);
        if (on_loss) on_loss(l.node, l.loss, l.why);
    }
}

}  // namespace bai::engine
