// Nodes on a Slurm cluster (slurm.md): each node is one holder job (sbatch of `sleep infinity`,
// sized by the cluster's vmSize) whose allocation is the node's host; its processes are steps
// started into it (srun --jobid --overlap); a thread polls squeue for every holder of this
// instance and reports the ones Slurm took away (pre-empted, NODE_FAIL, cancelled from outside).
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "emulator/engine/gpu_inventory.h"
#include "emulator/engine/node_hosts.h"
#include "emulator/engine/process.h"
#include "emulator/engine/slurm_commands.h"

namespace bai::engine {

class SlurmHosts : public NodeHosts {
public:
    // `env`: the environment the Slurm commands run with (SLURM_CONF, PATH); `poll`: how often
    // squeue is asked.
    SlurmHosts(SlurmSettings settings, Environment env, std::chrono::milliseconds poll = std::chrono::milliseconds(500));
    ~SlurmHosts() override;

    void start() override;
    void stop() override;
    std::optional<HostGrant> acquire(const Node& node, const ClusterSpec& spec, RunControl& control) override;
    std::vector<std::string> launch_prefix(const std::string& node_id, const std::string& step,
                                           const std::filesystem::path& cwd) override;
    std::optional<HostLoss> lost(const std::string& node_id) override;
    void kill_processes(const std::string& node_id) override;
    void release(const std::string& node_id) override;
    std::optional<Placement> placement(const std::string& node_id) const override;
    bool shares_disk() const override { return settings_.shares_disk; }
    void copy_to_host(const std::string& node_id, const std::vector<std::filesystem::path>& paths) override;
    void remove_from_host(const std::string& node_id, const std::filesystem::path& path) override;

private:
    struct Holder {
        std::string job_id;
        std::string state;  // as the last poll saw it ("" before the first)
        std::string host;
        std::string reason;
        bool granted = false;  // acquire returned it: a loss is reported from then on
        bool lost = false;     // reported (or released by the engine): not again
        int gpus = 0;          // asked for: each step asks for them too
    };

    // How long lost() waits for Slurm's verdict on a host that does not answer.
    static constexpr std::chrono::minutes kUnresponsiveWait{10};
    CommandOutput slurm(const std::vector<std::string>& argv) const;
    std::vector<Gpu> gpus_of(const std::string& job, const std::string& host, int count) const;
    void poll_loop();
    void poll_once();

    SlurmSettings settings_;
    Environment env_;
    std::chrono::milliseconds poll_every_;
    mutable std::mutex mutex_;
    std::condition_variable changed_;
    std::map<std::string, Holder> holders_;  // by node id
    std::vector<std::string> to_clean_;      // node ids whose leftover steps are to be cancelled
    bool stopping_ = false;
    bool poll_now_ = false;  // a holder was just asked for: poll without waiting the interval
    std::thread poller_;
};

}  // namespace bai::engine
