// The job engine: clusters of emulated nodes on this machine that run jobs. It
// implements what the ARM API asks of it (compute_engine.h): the hooks only post events, and
// one engine thread owns every cluster, node and queue, writes their state into the documents,
// and hands node setups and job runs to threads of their own. What HTTP threads read (nodes,
// cores in use) comes from a snapshot the engine thread publishes.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "emulator/arm/compute_engine.h"
#include "emulator/engine/clock.h"
#include "emulator/engine/event_queue.h"
#include "emulator/engine/cluster_spec.h"
#include "emulator/engine/gpu_inventory.h"
#include "emulator/engine/gpu_pool.h"
#include "emulator/engine/job_run.h"
#include "emulator/engine/node.h"
#include "emulator/engine/scheduling.h"
#include "emulator/engine/volume_links.h"
#include "emulator/engine/engine_history.h"
#include "emulator/engine/node_hosts.h"
#include "emulator/engine/node_logins.h"
#include "emulator/engine/storage_access.h"
#include "emulator/engine/tree_reaper.h"

namespace bai::engine {

struct EngineOptions {
    std::filesystem::path nodes_dir;  // DIR/nodes
    std::vector<Gpu> gpus;
    // The GPUs no node holds, shared with the Batch pools' nodes; the engine keeps its own of
    // `gpus` when null.
    std::shared_ptr<GpuPool> gpu_pool;
    std::string default_python;       // empty: "python" when on PATH, else "python3"
    // How long an auto-scale cluster stays idle before it shrinks to its minimum.
    std::chrono::milliseconds autoscale_idle{10000};
    // --strict-gpus: a node that cannot have all the GPUs of its size is not allocated (the
    // cluster stays smaller and says why) instead of running with fewer.
    bool strict_gpus = false;
    // Share mounts let the kernel read and write the files opened while no fault plan waits (FUSE
    // passthrough, Linux 6.9+); --no-passthrough: every read and write goes through the emulator.
    bool share_passthrough = true;
    // --share-mounts bind: shares are bind mounts of their directories (volume_links.h).
    bool bind_shares = false;
    // Nodes on hosts that reach the shares through the File REST API alone (--slurm-storage rest):
    // MountSettings::remote_shares.
    bool remote_shares = false;
    // Where jobs with containerSettings run (--container-runtime, --image, --strict-images).
    ContainerOptions containers;
    Clock* clock = nullptr;  // a real clock when null
    // Scenarios: plays the jobs whose command names a declared workload (declared_workload.h).
    DeclaredWorkloads* workloads = nullptr;
    // Scenarios: what happens to nodes and job runs, as (actor, event) lines for the trace.
    std::function<void(const std::string& actor, const std::string& event)> trace;
    // --compute slurm: where the nodes' processes run (node_hosts.h); null: this machine.
    std::shared_ptr<NodeHosts> hosts;
    // The nodes' ssh servers (node_logins.h), told of every node; null: none (nothing listens).
    NodeLogins* logins = nullptr;
};

class LocalEngine : public arm::ComputeEngine {
public:
    LocalEngine(arm::ResourceStore& store, StorageAccess storage, EngineOptions options);
    ~LocalEngine() override;

    // Reads the clusters and jobs of the store (jobs that were running are requeued: the
    // emulator stopped under them as a node fails) and starts the engine thread.
    void start();
    // Stops every setup and run (their jobs stay running in the store and are requeued by the
    // next start) and the engine thread.
    void stop();

    void cluster_created(const std::string& cluster_id) override;
    void cluster_scaled(const std::string& cluster_id) override;
    void cluster_deleted(const arm::StoredResource& cluster) override;
    void job_created(const std::string& job_id) override;
    void job_terminate(const std::string& job_id) override;
    void job_deleted(const arm::StoredResource& job) override;
    void file_server_deleted(const arm::StoredResource& file_server) override;
    nlohmann::json remote_login(const arm::StoredResource& cluster_or_job) override;
    nlohmann::json cores_in_use(const std::string& location) override;

    // The emulator's own API. Every node: cluster, id, address, state, job, GPUs, priority.
    nlohmann::json nodes();
    // Pre-empts a low-priority node as the cloud did: its job (if any) is requeued, the node goes
    // and a new one takes its place. Returns {"nodeId", "requeuedJob"}; nullopt when no node has
    // that id; throws std::invalid_argument when the node is not low-priority.
    std::optional<nlohmann::json> preempt(const std::string& node_id);
    // The node fails (any node): it becomes unusable and stays so, and its job (if any) is
    // requeued. Returns {"nodeId", "requeuedJob"}; nullopt when no node has that id.
    std::optional<nlohmann::json> fail(const std::string& node_id);
    // Where the job's last run (since the start) wrote its stdout and stderr on this machine: for a
    // stdOutErrPathPrefix on the node's own disk ($AZ_BATCHAI_JOB_TEMP), which no API reaches. Gone
    // from the disk once its node has left. As a directory the emulator made (the master node's
    // root, or the cluster's directory of shared job temps), which a job cannot replace, and the
    // path under it, every part of which the job could have replaced by a link.
    struct LocalLogs {
        std::filesystem::path anchor;
        std::string relative;
    };
    std::optional<LocalLogs> stdouterr_directory(const std::string& job_key);
    // Kills the job's processes (or cuts its declared workload short) as a SIGKILL from outside
    // would: the job fails with exit code 137. Nothing happens to a job that is not running.
    void kill(const std::string& job_id);
    // What the nodes and jobs lived through since the start (the portal's timelines).
    const EngineHistory& history() const { return history_; }
    // Faults injected into the share mounts of every node (fuse_mounts/common/mount_faults.h).
    mounts::MountFaults& mount_faults() { return faults_; }
    bool binds_shares() const { return options_.bind_shares; }

private:
    FileServerExport file_server_export(const std::string& id) const;
    void sweep_file_server_disks();
    std::filesystem::path file_server_disk(std::int64_t seq) const;
    struct NodeSlot {
        Node node;
        int address_number = 0;  // N of address_of(N), given back when the node goes
        std::shared_ptr<RunControl> setup;
        std::thread setup_thread;
        // The cluster's volumes under the node's mount root, for the node's life.
        std::shared_ptr<AttachedVolumes> volumes = std::make_shared<AttachedVolumes>();
    };
    struct ClusterState {
        ClusterSpec spec;
        std::string key;
        std::string location;
        std::filesystem::path dir;
        std::vector<std::unique_ptr<NodeSlot>> nodes;
        int target = 0;
        int next_node = 1;
        nlohmann::json errors = nlohmann::json::array();
        std::optional<time::TimePoint> idle_since;
        // The execution fields last written into the document: unchanged ones are not rewritten.
        nlohmann::json written;
        bool deleted = false;
        bool short_of_gpus = false;  // strict GPUs: fewer nodes than the target, for good  // its document is gone; it ends when its last running job has
    };
    struct RunningJob {
        std::string id;
        std::string cluster_key;
        std::vector<std::string> node_ids;
        std::shared_ptr<RunControl> control;
        std::thread thread;
        time::TimePoint deadline;
        std::string max_wall_clock;
        QueuedJob queued;  // to requeue it as it was
    };

    void post(std::function<void()> event);
    void loop();
    void run_event(const std::function<void()>& event);
    void trace(const std::string& actor, const std::string& event) const;
    // Records an event of the history (engine_history.h) at the clock's now.
    void note(const std::string& cluster_key, const std::string& node, const std::string& job_key,
              const std::string& job_id, const std::string& event, const std::string& detail = "");

    void load_cluster(const std::string& cluster_id, bool created);
    void drop_cluster(const std::string& key, const std::string& name);
    // A deleted cluster whose last node has gone: its directory and state.
    void forget_cluster(std::map<std::string, ClusterState>::iterator it);
    // A deleted cluster whose nodes still finish its jobs steps aside (under a key of its own)
    // when a cluster of the same name is created: the new one starts fresh.
    void retire_cluster(std::map<std::string, ClusterState>::iterator it);
    void enqueue(const std::string& job_id);
    void enqueue(const arm::StoredResource& job);
    void recover();
    void schedule();
    void check_deadlines();
    // Every hour of the clock: the staged blocks of uploads not touched for a week go (BlobStore).
    void sweep_staged_blocks();
    void resize(ClusterState& cluster);
    void add_node(ClusterState& cluster);
    void remove_node(ClusterState& cluster, size_t index, const std::string& why);
    // Gives back what a node held (address, GPUs, volumes, directory) once its setup is over.
    void finish_removal(NodeSlot& slot);
    void node_ready(const std::string& cluster_key, const std::string& node_id, bool usable, const std::string& code,
                    const std::string& message);
    // The node's host answered (its address), before its setup: on the engine thread.
    void node_placed(const std::string& cluster_key, const std::string& node_id, const HostGrant& grant);
    // The node's host was taken away (NodeHosts::on_loss), on the engine thread.
    void host_lost(const std::string& node_id, HostLoss loss, const std::string& why);
    void start_job(ClusterState& cluster, const QueuedJob& job, std::vector<NodeSlot*> nodes);
    void job_done(const std::string& key, JobOutcome outcome);
    void stop_job(const std::string& key, const std::string& reason);
    void write_cluster(ClusterState& cluster);
    void add_cluster_error(ClusterState& cluster, const std::string& code, const std::string& message);
    void publish();
    // Tells the nodes' ssh servers of the nodes, when they changed (publish).
    void publish_logins();
    ClusterState* cluster_of_node(const std::string& node_id, size_t& index);
    // Runs `change` on the engine thread for the node and waits for its answer (nullopt: no node).
    using NodeChange = std::function<nlohmann::json(ClusterState& cluster, size_t index)>;
    std::optional<nlohmann::json> change_node(const std::string& node_id, NodeChange change);
    // The device nodes (/dev/nvidiaN) of these GPUs; fake GPUs have none.
    std::vector<std::string> devices_of(const std::vector<std::string>& uuids) const;

    arm::ResourceStore& store_;
    StorageAccess storage_;
    EngineOptions options_;
    RealClock real_clock_;
    Clock& clock_;
    std::filesystem::path mpi_agent_;
    std::filesystem::path node_ssh_;  // bai-node-ssh beside the emulator's executable, when there
    RuntimeProbe runtimes_;
    // Removes departed nodes' directories off the engine's thread (nodes_dir/.reaped).
    TreeReaper reaper_;
    mounts::MountFaults faults_;
    EngineHistory history_;

    // The event queue (hooks and worker threads post; the engine thread runs).
    EventQueue events_{clock_};
    std::optional<time::TimePoint> next_staged_sweep_;
    std::optional<time::TimePoint> next_deadline_;  // the engine thread's (and start()'s, before it)
    std::thread thread_;

    // Owned by the engine thread.
    std::map<std::string, ClusterState> clusters_;
    std::map<std::string, std::vector<QueuedJob>> queues_;  // by cluster key
    std::map<std::string, RunningJob> running_;             // by job key
    std::set<int> addresses_in_use_;
    std::vector<std::unique_ptr<NodeSlot>> leaving_setups_;  // removed while their setup ran
    int retired_clusters_ = 0;
    std::shared_ptr<GpuPool> gpu_pool_;
    std::vector<std::string> login_nodes_;  // "id address" of the nodes the ssh servers were last told of

    // Published for other threads: what they read of each node, copied after every batch of
    // events as plain values (as JSON documents, a seventh of a large replay's time went there),
    // made into documents when asked for.
    struct NodeView {
        std::string cluster, cluster_key, location, node_id, address, state, vm_size, root;
        std::optional<NodeHosts::Placement> placement;  // on a host system's host
        std::optional<std::string> job;
        std::vector<std::string> gpus;
        int cores = 0;
        bool low_priority = false;
    };
    std::mutex snapshot_mutex_;
    std::vector<NodeView> nodes_snapshot_;
    std::map<std::string, std::vector<std::string>> job_nodes_;  // job key -> node ids of its last run
    std::map<std::string, LocalLogs> job_logs_;                  // job key -> its last run's stdouterr directory
};

}  // namespace bai::engine
