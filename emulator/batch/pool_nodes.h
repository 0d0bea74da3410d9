// The compute nodes of the Batch pools (issue 9): emulated VMs on this machine, one directory
// each (DIR/nodes/batch/ACCOUNT/POOL/NODE, with the service's startup/, shared/ and tmp/), that
// come and go with a pool's targets, run its start task when they join (not under a shell, as
// the service runs it), and report into the pool's document (currentDedicatedNodes,
// currentLowPriorityNodes, allocationState). One thread owns every node; start tasks run on
// threads of their own and post their end back. Nodes do not survive the emulator: at start,
// every pool gets new ones.
#pragma once

#include <condition_variable>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "emulator/batch/autoscale_formula.h"
#include "emulator/batch/entity_store.h"
#include "emulator/engine/clock.h"
#include "emulator/engine/declared_workload.h"
#include "emulator/engine/event_queue.h"
#include "emulator/engine/run_control.h"

namespace bai::batch {

class PoolNodes {
public:
    // `clock`: a replay's virtual clock, whose turns the nodes' threads take as the job engine's
    // do (emulator/engine/clock.h); the real one when null.
    // `workloads`: a replay's declared workloads, played for tasks whose command line names one.
    PoolNodes(EntityStore& store, std::filesystem::path root, engine::Clock* clock = nullptr,
              engine::DeclaredWorkloads* workloads = nullptr);
    ~PoolNodes();

    void start();
    // Kills the start tasks and removes the nodes' directories.
    void stop();

    // A pool was added or its targets changed.
    void pool_changed(const std::string& account, const std::string& pool_id);
    // The pool (already marked deleting) loses its nodes, then its document.
    void pool_deleting(const std::string& account, const std::string& pool_id);

    // A task was added to a job of the pool: it runs when a node of the pool has a free slot.
    void task_added(const std::string& account, const std::string& pool_id, const std::string& job_id,
                    const std::string& task_id);
    // The job (already marked deleting) loses its tasks (running ones are killed), then its
    // document.
    void job_deleting(const std::string& account, const std::string& job_id);

    // Pre-empts a low-priority node as the service does: its running tasks are requeued (their
    // requeueCount counts it, not their retryCount), the node goes and a new one takes its place.
    // {"nodeId", "requeuedTasks": ["JOB/TASK", ...]}; nullopt when the pool has no such node;
    // throws BatchError 409 NodeNotLowPriority for a dedicated node.
    std::optional<nlohmann::json> preempt(const std::string& account, const std::string& pool_id, const std::string& node_id);

    // `formula` over the pool's present metrics (evaluateAutoScale): nothing changes.
    AutoScaleResult try_formula(const std::string& account, const std::string& pool_id, const std::string& formula);

    // The nodes of a pool as the service lists them (without url), in the order they joined.
    nlohmann::json nodes(const std::string& account, const std::string& pool_id) const;
    // Where a node's directory is, for its files; nullopt when no such node.
    std::optional<std::filesystem::path> node_root(const std::string& account, const std::string& pool_id,
                                                   const std::string& node_id) const;

private:
    struct Node {
        std::string id;
        bool dedicated = true;
        std::string state;  // starting, waitingforstarttask, idle, starttaskfailed, leavingpool
        std::string state_time;
        std::string allocation_time;
        std::string address;
        std::filesystem::path root;
        nlohmann::json start_task_info;  // null when the pool has no start task
        std::shared_ptr<engine::RunControl> control;
        std::thread start_task;
        int running_tasks = 0;
        int total_tasks_run = 0;
        int total_tasks_succeeded = 0;
    };
    struct TaskRef {
        std::string job_id;
        std::string task_id;
    };
    struct RunningTask {
        std::string account;
        TaskRef task;
        std::string node_id;
        std::shared_ptr<engine::RunControl> control;
        std::thread thread;
    };
    struct Pool {
        std::string account;
        std::string id;
        std::vector<std::unique_ptr<Node>> nodes;
        int next_number = 0;
        bool deleting = false;
        std::deque<TaskRef> queue;  // tasks waiting for a slot, in the order they came
    };
    using Key = std::pair<std::string, std::string>;  // account, lower-cased pool id

    void post(std::function<void()> event);
    // Runs `question` on the nodes' thread and waits for its answer (or its exception).
    template <typename T>
    T ask(std::function<T()> question);
    void loop();
    void reconcile(const Key& key);
    // An auto-scale pool's formula over its present metrics: new targets and autoScaleRun.
    void evaluate(Pool& pool, const StoredEntity& stored);
    AutoScaleInputs metrics_of(const Pool& pool, const StoredEntity& stored) const;
    void add_node(Pool& pool, const nlohmann::json& doc, bool dedicated);
    engine::Environment node_environment(const Pool& pool, const Node& node) const;
    void remove_node(Pool& pool, size_t index);
    void start_task_done(const Key& key, const std::string& node_id, nlohmann::json info, bool succeeded);
    void schedule(const Key& key);
    void run_task(Pool& pool, Node& node, const TaskRef& task);
    void task_done(const std::string& run_key, int exit_code, nlohmann::json failure);
    void recover_tasks();
    void write_pool(const Pool& pool);
    void publish(const Key& key);

    EntityStore& store_;
    std::filesystem::path root_;
    engine::RealClock real_clock_;
    engine::Clock& clock_;
    engine::DeclaredWorkloads* workloads_;
    // Removed while their start task ran: their removal ends when it reports (start_task_done).
    std::vector<std::unique_ptr<Node>> leaving_;
    int next_address_ = 0;

    engine::EventQueue events_{clock_};
    std::thread thread_;

    std::map<Key, Pool> state_;  // owned by the event thread
    std::map<std::string, RunningTask> running_;  // by "account/job/task" (lower-cased)

    mutable std::mutex snapshot_mutex_;
    std::map<Key, nlohmann::json> snapshot_;
    std::map<Key, std::map<std::string, std::filesystem::path>> roots_;
};

}  // namespace bai::batch
