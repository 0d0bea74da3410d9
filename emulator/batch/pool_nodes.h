// The compute nodes of the Batch pools: emulated VMs on this machine, one directory
// each (DIR/batch-nodes/ACCOUNT/POOL/NODE, with the service's startup/, shared/, tmp/ and
// workitems/), that come and go with a pool's targets and formula, run its start task when they
// join (not under a shell, as the service runs it), run the tasks of its jobs, and report into
// the pool's document (currentDedicatedNodes, currentLowPriorityNodes, allocationState). One
// thread owns every node and its timers (wall clocks, retention, auto-scale samples and
// evaluations, reboots, recoveries); start tasks and tasks run on threads of their own and post
// their end back. pool_nodes.cpp: nodes and pools; pool_tasks.cpp: tasks and jobs;
// node_actions.cpp: what is done to one node. Nodes do not survive the emulator: at start, every
// pool gets new ones.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <set>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "emulator/batch/app_packages.h"
#include "emulator/batch/autoscale_formula.h"
#include "emulator/batch/batch_error.h"
#include "emulator/batch/entity_store.h"
#include "emulator/batch/node_image.h"
#include "emulator/batch/task_container.h"
#include "emulator/batch/task_process.h"
#include "emulator/batch/usage_stats.h"
#include "emulator/engine/clock.h"
#include "emulator/engine/container_runtime.h"
#include "emulator/engine/declared_workload.h"
#include "emulator/engine/event_queue.h"
#include "emulator/engine/gpu_pool.h"
#include "emulator/engine/run_control.h"

namespace bai::batch {

// BatchError 500: the nodes' thread did not answer in time.
[[noreturn]] void throw_no_answer();

struct NodeOptions {
    // A replay's virtual clock, whose turns the nodes' threads take as the job engine's do
    // (emulator/engine/clock.h); the real one when null.
    engine::Clock* clock = nullptr;
    // A replay's declared workloads, played for tasks whose command line names one.
    engine::DeclaredWorkloads* workloads = nullptr;
    // --image IMAGE=DIR: the local roots of the pools' images (node_image.h) and of tasks'
    // container images (task_container.h).
    std::map<std::string, std::filesystem::path> images;
    // --container-runtime and --strict-images, for tasks with containerSettings.
    engine::RuntimeChoice container_runtime = engine::RuntimeChoice::automatic;
    bool strict_images = false;
    // The machine's free GPUs, shared with the Batch AI nodes: a node of a GPU size (STANDARD_NC6:
    // 1) takes its own. None when null.
    std::shared_ptr<engine::GpuPool> gpus;
    // Scenarios: what happens to nodes, tasks and jobs, as (actor, event) lines for the trace.
    std::function<void(const std::string& actor, const std::string& event)> trace;
    // --batch-application: the accounts' application packages.
    std::vector<AppPackage> packages;
    // bai-node-ssh: `ssh` between the nodes of a multi-instance task (none when empty).
    std::filesystem::path node_ssh;
};

class PoolNodes {
public:
    PoolNodes(EntityStore& store, std::filesystem::path root, NodeOptions options = {});
    ~PoolNodes();

    void start();
    // Kills the start tasks and removes the nodes' directories.
    void stop();

    // A pool was added or its targets changed.
    void pool_changed(const std::string& account, const std::string& pool_id);
    // The pool (already marked deleting) loses its nodes, then its document.
    void pool_deleting(const std::string& account, const std::string& pool_id);

    // A task was added to a job of the pool: it runs when a node of the pool has a free slot (and,
    // with dependsOn, once the tasks it depends on let it: satisfies_dependents); a multi-instance
    // task when as many nodes of the pool as it has instances are idle (multi_instance.h).
    void task_added(const std::string& account, const std::string& pool_id, const std::string& job_id, const nlohmann::json& task);
    // The job (already marked deleting) loses its tasks (running ones are killed), then its
    // document.
    void job_deleting(const std::string& account, const std::string& job_id);
    // A job was added: its constraints.maxWallClockTime runs from now.
    void job_added(const std::string& account, const std::string& job_id);
    // A job was patched or updated (constraints, onAllTasksComplete, priority).
    void job_changed(const std::string& account, const std::string& job_id);
    // The job (already marked terminating by the API) ends: its running tasks are terminated, its
    // active ones stay active and are not run; then it is completed.
    void job_terminating(const std::string& account, const std::string& job_id);
    // The job (already marked disabled by the API) runs no new task; its running ones go as
    // `option` says: requeue, terminate, or wait (they run on).
    void job_disabled(const std::string& account, const std::string& job_id, const std::string& option);
    // The job (already marked active again) has its active tasks run.
    void job_enabled(const std::string& account, const std::string& job_id);
    // Ends a task as the service's terminate does (a running one is killed): completed, failure,
    // TaskEnded. Nothing happens to a completed task.
    void terminate_task(const std::string& account, const std::string& job_id, const std::string& task_id);
    // Removes a task, its process (killed) and its directory.
    void delete_task(const std::string& account, const std::string& job_id, const std::string& task_id);
    // A task's constraints changed (maxWallClockTime of a running task).
    void task_changed(const std::string& account, const std::string& job_id, const std::string& task_id);

    // Pre-empts a low-priority node as the service does: its running tasks are requeued (their
    // requeueCount counts it, not their retryCount), the node goes and a new one takes its place.
    // {"nodeId", "requeuedTasks": ["JOB/TASK", ...]}; nullopt when the pool has no such node;
    // throws BatchError 409 NodeNotLowPriority for a dedicated node.
    // `recover_after`: how long it stays `preempted` (counted in currentLowPriorityNodes, running
    // nothing) before a new node takes its place.
    std::optional<nlohmann::json> preempt(const std::string& account, const std::string& pool_id, const std::string& node_id,
                                          std::chrono::seconds recover_after);
    // Reboots (or reimages: its directories wiped) a node: its tasks go as `option` says (requeue,
    // terminate: at once; taskcompletion, retaineddata: once they end), then it is `rebooting`
    // and runs its start task again. False when the pool has no such node.
    bool reboot(const std::string& account, const std::string& pool_id, const std::string& node_id,
                const std::string& option, bool reimage);
    // Removes these nodes (their pool's targets go down by as many): they leave at once or, with
    // taskcompletion or retaineddata, stay `leavingpool` until their tasks end. Throws BatchError
    // 400 naming nodeList when one is not in the pool.
    void remove_nodes(const std::string& account, const std::string& pool_id, const std::vector<std::string>& node_ids,
                      const std::string& option);
    // Stops (or starts again) new tasks going to a node; running ones go as `option` says
    // (requeue, terminate, taskcompletion). False when the pool has no such node.
    bool set_scheduling(const std::string& account, const std::string& pool_id, const std::string& node_id, bool enabled,
                        const std::string& option);

    // Job schedules (job_schedules.cpp): a schedule was added, changed or enabled (it makes its
    // jobs on the nodes' clock); it terminates (its active job too); it is deleted (its jobs too).
    void schedule_changed(const std::string& account, const std::string& schedule_id);
    void schedule_terminating(const std::string& account, const std::string& schedule_id);
    void schedule_deleting(const std::string& account, const std::string& schedule_id);

    // A node's user accounts (node_users.cpp): BatchError 404 NodeNotFound, NodeUserNotFound,
    // 409 NodeUserExists, NodeNotReady (not idle or running). `user` is checked already.
    void add_user(const std::string& account, const std::string& pool_id, const std::string& node_id, const nlohmann::json& user);
    void update_user(const std::string& account, const std::string& pool_id, const std::string& node_id, const std::string& name,
                     const nlohmann::json& change);
    void delete_user(const std::string& account, const std::string& pool_id, const std::string& node_id, const std::string& name);
    // The account's node sessions: those that ended (its usage record) and its nodes' now; and
    // now on the nodes' clock.
    std::vector<NodeSession> node_sessions(const std::string& account);
    time::TimePoint now() const { return clock_.now(); }
    // The account's usage record (usage_stats.h), made when missing.
    nlohmann::json usage_record(const std::string& account);
    // Changes the account's usage record (made first when missing).
    void update_usage(const std::string& account, const std::function<void(nlohmann::json&)>& change);
    // The job's preparation and release tasks on each node where they ran, as
    // jobpreparationandreleasetaskstatus lists them (nodeUrl relative to the account's URL).
    nlohmann::json job_task_status(const std::string& account, const std::string& job_id);
    // The node's number in its pool (0 for the first that joined it): its public ports' offset.
    std::optional<int> node_number(const std::string& account, const std::string& pool_id, const std::string& node_id);

    // `formula` over the pool's present metrics (evaluateAutoScale): nothing changes.
    AutoScaleResult try_formula(const std::string& account, const std::string& pool_id, const std::string& formula);

    // The nodes of a pool as the service lists them (without url), in the order they joined.
    nlohmann::json nodes(const std::string& account, const std::string& pool_id) const;
    // Where a node's directory is, for its files; nullopt when no such node.
    std::optional<std::filesystem::path> node_root(const std::string& account, const std::string& pool_id,
                                                   const std::string& node_id) const;

private:
    // A job's preparation (and, once the job has ended, release) task on a node.
    struct JobTasks {
        std::string state;        // of the preparation: running, succeeded, failed
        nlohmann::json prep;      // jobPreparationTaskExecutionInfo
        nlohmann::json release;   // jobReleaseTaskExecutionInfo, null until it runs
    };
    struct Node {
        std::string id;
        int number = 0;  // in its pool, from 0 as they join
        std::string account;
        std::string pool_id;
        std::string vm_size;
        time::TimePoint joined;  // on the nodes' clock, for the account's usage
        bool dedicated = true;
        // starting, waitingforstarttask, idle, running, starttaskfailed, rebooting, reimaging,
        // preempted, leavingpool
        std::string state;
        // What happens once its running tasks have ended: nothing, leave the pool, reboot, reimage.
        enum class Then { nothing, leave, reboot, reimage } then = Then::nothing;
        bool scheduling = true;  // schedulingState enabled
        bool exclusive = false;  // it runs a task that runs alone (a job manager's runExclusive)
        std::string state_time;
        std::string allocation_time;
        std::string address;
        std::filesystem::path root;
        NodeImage image;  // where its processes run
        std::vector<std::string> gpus;  // their UUIDs, as its size has them and the machine can
        nlohmann::json start_task_info;  // null when the pool has no start task
        nlohmann::json errors;           // its ComputeNodeErrors; null when none
        std::shared_ptr<engine::RunControl> control;
        std::thread start_task;
        int running_tasks = 0;
        int total_tasks_run = 0;
        int total_tasks_succeeded = 0;
        // The jobs whose preparation ran here, by lower-cased id (job_preparation.cpp).
        std::map<std::string, JobTasks> job_tasks;
        // Its user accounts by lower-cased name: the account as added, less its password (whose
        // hash is "_hash").
        std::map<std::string, nlohmann::json> users;
    };
    struct TaskRef {
        std::string job_id;
        std::string task_id;
        bool dependent = false;  // it has dependsOn: it runs once they let it
        int instances = 0;       // a multi-instance task's numberOfInstances; 0 for another task
        // A job manager task's runExclusive (it runs alone on its node) and !allowLowPriorityNode.
        bool exclusive = false;
        bool dedicated_only = false;
    };
    static TaskRef task_ref(const std::string& job_id, const nlohmann::json& task);
    struct RunningTask {
        std::string account;
        TaskRef task;
        std::string node_id;                    // the node it runs on (a multi-instance task's primary)
        std::vector<std::string> subtask_nodes;  // a multi-instance task's other nodes
        bool on(const std::string& node) const {
            return node_id == node || std::find(subtask_nodes.begin(), subtask_nodes.end(), node) != subtask_nodes.end();
        }
        std::filesystem::path dir;  // the task's directory on the node
        std::vector<std::filesystem::path> subtask_dirs;  // and on its other nodes
        std::uint64_t serial = 0;   // this run's, for its timers
        time::TimePoint started;    // on the nodes' clock
        std::shared_ptr<engine::RunControl> control;
        std::thread thread;
    };
    struct Pool {
        std::string account;
        std::string id;
        std::vector<std::unique_ptr<Node>> nodes;
        bool deleting = false;
        // The runs (running_'s keys) that its nodes stopped as they left and that have not ended
        // yet: a pool being deleted stays (deleting) until their tasks are requeued.
        std::set<std::string> stopping;
        std::deque<TaskRef> queue;  // tasks waiting for a slot, in the order they came
        // An auto-scale pool's metrics, one sample each kSamplePeriod, newest first, a day's worth.
        std::deque<MetricSample> samples;
        bool sampling = false;    // its sample timer is set
        bool evaluating = false;  // its evaluation timer is set
        // Since when it has wanted more nodes than it has (allocation_due).
        std::optional<time::TimePoint> wanting_since;
        // Since when it has auto-scaled (formula_due).
        std::optional<time::TimePoint> auto_scale_since;
    };
    using Key = std::pair<std::string, std::string>;  // account, lower-cased pool id

    void trace(const std::string& actor, const std::string& event) const;
    void post(std::function<void()> event);
    // Runs `event` on the nodes' thread once the clock reaches `when`.
    void at(time::TimePoint when, std::function<void()> event);
    // Runs `question` on the nodes' thread and waits for its answer (or its exception).
    template <typename T>
    T ask(std::function<T()> question);
    void loop();
    Node* find_node(const Key& key, const std::string& node_id);
    Node& need_ready_node(const Key& key, const std::string& node_id);
    // The node's accounts where its processes see them (node_users.cpp).
    void write_users(const Node& node);
    // Cancels the node's running tasks with `reason` (requeue, terminate); how many.
    int stop_node_tasks(const Node& node, const std::string& reason);
    // Stops what the node runs of its own (its start task, job preparation and release tasks).
    void cancel_node(const Node& node, const std::string& reason);
    // Its start task again (after a reboot), or idle when the pool has none.
    void launch_start_task(Pool& pool, Node& node, const nlohmann::json& doc);
    // What a node does once it has no running task (Node::then).
    void node_drained(const Key& key, Node& node);
    void finish_reboot(const Key& key, const std::string& node_id);
    // Its boot is over: its start task runs.
    void node_booted(const Key& key, const std::string& node_id);
    void reconcile(const Key& key);
    // Whether the nodes a pool wants are to join now (it has wanted them for kAllocateTime); arms
    // the timer that reconciles it then.
    bool allocation_due(const Key& key, Pool& pool);
    // Whether an auto-scale pool's formula is evaluated now: kAllocateTime after it was enabled.
    bool formula_due(const Key& key, Pool& pool);
    // An auto-scale pool's formula over its present metrics: new targets and autoScaleRun.
    void evaluate(Pool& pool, const StoredEntity& stored);
    AutoScaleInputs metrics_of(const Pool& pool, const StoredEntity& stored) const;
    // An auto-scale pool's timers: a sample of its metrics every kSamplePeriod, an evaluation
    // every autoScaleEvaluationInterval; each ends once the pool no longer auto-scales.
    void arm_autoscale(const Key& key);
    void take_sample(const Key& key);
    void evaluation_due(const Key& key);
    void add_node(Pool& pool, const nlohmann::json& doc, bool dedicated);
    // A new (or reimaged) node's directories, as the service lays them out.
    static void make_node_directories(const std::filesystem::path& root);
    engine::Environment node_environment(const Pool& pool, const Node& node) const;
    static std::string hostname_of(const Node& node);
    // The device nodes of its GPUs that have them (and the driver's), and their UUIDs.
    std::vector<std::string> gpu_devices(const Node& node, std::vector<std::string>* uuids = nullptr) const;
    // How the node's processes are started (its image's sandbox, or the host).
    Wrap wrap_for(const Node& node) const;
    // What the node gives its tasks' containers; nullopt when its pool has no
    // containerConfiguration.
    std::optional<NodeContainers> containers_for(const nlohmann::json& pool_doc, const Node& node);
    // Its running tasks are stopped with `task_reason` (requeue, terminate).
    void remove_node(Pool& pool, size_t index, const std::string& task_reason = "requeue");
    void remove_node(Pool& pool, const Node& node, const std::string& task_reason = "requeue");
    // A node gone: its GPUs back to the machine's, its directory removed, its time in the pool
    // in the account's usage.
    void forget_node(Node& node);
    // `error`: the node's own (ComputeNodeError), which makes it unusable; null when none.
    void start_task_done(const Key& key, const std::string& node_id, nlohmann::json info, bool succeeded,
                         nlohmann::json error = nullptr);
    void start_task_begins(const Key& key, const std::string& node_id, bool wait);
    void schedule(const Key& key);
    // Whether the tasks a task depends on let it run; `known` caches answers for one pass.
    bool dependencies_met(const std::string& account, const TaskRef& task, std::map<std::string, bool>& known);
    // Whether the node may run a task of the job now (job_preparation.cpp): its preparation has
    // succeeded there (or the job has none, or does not wait for it); starts it there when it has
    // not run. `jobs` caches the jobs' documents for one scheduling pass.
    bool preparation_allows(Pool& pool, Node& node, const std::string& job_id, const nlohmann::json& pool_doc,
                            std::map<std::string, std::optional<nlohmann::json>>& jobs);
    void start_job_task(Pool& pool, Node& node, const nlohmann::json& job, const nlohmann::json& pool_doc, bool release);
    void job_task_done(const Key& key, std::uint64_t serial, const std::string& node_id, const std::string& job_id, bool release,
                       nlohmann::json info, bool succeeded);
    // The job has ended (completed or deleted): its release task on every node it prepared.
    void release_job(const std::string& account, const nlohmann::json& job);
    // `pool_doc`: the pool's stored document (its certificates). `nodes`: one, or a multi-instance
    // task's (its primary's first).
    void run_task(Pool& pool, const std::vector<Node*>& nodes, const TaskRef& task, const nlohmann::json& pool_doc);
    // Multi-instance tasks whose nodes are idle start (ahead of the others, which would keep
    // them from ever having enough).
    void schedule_multi_instance(Pool& pool, const nlohmann::json& pool_doc,
                                 std::map<std::string, std::optional<nlohmann::json>>& jobs, std::map<std::string, bool>& satisfied);
    // The variables of a task on `node` (the node's, its certificates, packages, directories).
    engine::Environment task_environment(const Pool& pool, const Node& node, const nlohmann::json& job, const nlohmann::json& task,
                                         const std::filesystem::path& dir, const nlohmann::json& pool_doc);
    // `subtasks`: a multi-instance task's SubtaskInformation (null for another task).
    // `container`: its TaskContainerExecutionInformation (null when it ran in none).
    void task_done(const std::string& run_key, int exit_code, nlohmann::json failure, nlohmann::json subtasks = nullptr,
                   nlohmann::json container = nullptr);
    // After a task completed: its retention timer, its job's exit action and onAllTasksComplete.
    void task_completed(const std::string& account, const std::string& job_id, const nlohmann::json& task);
    void arm_wall_clock(const std::string& run_key);
    void arm_job_clock(const std::string& account, const std::string& job_id);
    // Marks the job terminating with `reason` (when it is active), stops its tasks, completes it
    // once none runs.
    void terminate_job(const std::string& account, const std::string& job_id, const std::string& reason);
    // The job's (or one task's, when task_id is not empty) waiting tasks out of the queues.
    void unqueue(const std::string& account, const std::string& job_id, const std::string& task_id);
    // The job's tasks out of the queues, its running ones cancelled with `reason` (none: they run on).
    void stop_job_tasks(const std::string& account, const std::string& job_id, const std::string& reason);
    // Deletes the job's auto pool when it goes with the job (job_owns_pool).
    void release_auto_pool(const std::string& account, const nlohmann::json& job);
    void delete_auto_pool(const std::string& account, const std::string& pool_id, const std::string& why);
    // A schedule at this instant: makes its job when due, completes it, sets its next timer.
    void consider_schedule(const std::string& account, const std::string& schedule_id);
    // Adds the schedule's next job (and its auto pool); the job's id.
    std::string make_schedule_job(const std::string& account, const nlohmann::json& schedule);
    void complete_schedule(const std::string& account, const std::string& schedule_id);
    void delete_schedule(const std::string& account, const std::string& schedule_id);
    // Deletes the auto pool of a schedule (poolLifetimeOption jobschedule) unless kept alive.
    void release_schedule_pool(const std::string& account, const nlohmann::json& schedule);
    // A job completed or was deleted: its schedule, if any, may make the next or complete.
    void schedule_job_ended(const std::string& account, const nlohmann::json& job);
    void recover_schedules();
    void finish_job_if_idle(const std::string& account, const std::string& job_id);
    void check_all_complete(const std::string& account, const std::string& job_id);
    bool job_has_running(const std::string& account, const std::string& job_id) const;
    // The job's active tasks back in its pool's queue (at start, after the job is enabled).
    void queue_job_tasks(const StoredEntity& job);
    void recover_tasks();
    void write_pool(const Pool& pool);
    void publish(const Key& key);

    EntityStore& store_;
    std::filesystem::path root_;
    engine::RealClock real_clock_;
    engine::Clock& clock_;
    engine::DeclaredWorkloads* workloads_;
    std::map<std::string, std::filesystem::path> images_;
    std::shared_ptr<engine::GpuPool> gpus_;
    std::function<void(const std::string& actor, const std::string& event)> trace_;
    AppPackages packages_;
    std::filesystem::path node_ssh_;
    std::string bwrap_;
    engine::ContainerOptions container_options_;
    // The docker engine and bubblewrap, probed when a container pool's node first needs them;
    // containers are labelled with the nodes' directory (docker_client.h).
    engine::RuntimeProbe runtimes_;
    // Removed while their start task ran: their removal ends when it reports (start_task_done).
    std::vector<std::unique_ptr<Node>> leaving_;
    int next_address_ = 0;

    engine::EventQueue events_{clock_};
    std::thread thread_;

    std::map<Key, Pool> state_;  // owned by the event thread
    std::map<std::string, RunningTask> running_;  // by "account/job/task" (lower-cased)
    std::uint64_t next_serial_ = 0;
    // Node numbers by pool, kept when a pool goes: a pool added again under its id has new node
    // ids (and directories), whatever its old nodes still report.
    std::map<Key, int> next_numbers_;
    std::multimap<time::TimePoint, std::function<void()>> timers_;
    std::map<Key, time::TimePoint> schedule_wakes_;  // account, lower-cased schedule id
    // Job preparation and release tasks running, by serial: joined when they report; their
    // processes, stopped with their node (cancel_node) or at their maxWallClockTime.
    std::map<std::uint64_t, std::thread> side_threads_;
    struct SideRun {
        std::string node_id;
        std::shared_ptr<engine::RunControl> control;
    };
    std::map<std::uint64_t, SideRun> side_runs_;

    mutable std::mutex snapshot_mutex_;
    std::map<Key, nlohmann::json> snapshot_;
    std::map<Key, std::map<std::string, std::filesystem::path>> roots_;
};

template <typename T>
T PoolNodes::ask(std::function<T()> question) {
    // A BatchError comes back as plain data and is thrown anew here: an exception (or the
    // message of a runtime_error) handed between threads is freed by libstdc++'s own reference
    // count, which ThreadSanitizer cannot see and reports as a race with the thread that read it.
    struct Error {
        int status;
        std::string code;
        std::string message;
        std::vector<std::pair<std::string, std::string>> values;
    };
    using Answer = std::variant<T, Error>;
    std::optional<Answer> answer = events_.ask<Answer>([question = std::move(question)]() -> Answer {
        try {
            return Answer(std::in_place_index<0>, question());
        } catch (const BatchError& e) {
            return Answer(std::in_place_index<1>, Error{e.status, e.code, std::string(e.what()), e.values});
        }
    });
    if (!answer) throw_no_answer();
    if (answer->index() == 1) {
        const Error& e = std::get<1>(*answer);
        throw BatchError(e.status, e.code, e.message, e.values);
    }
    return std::get<0>(std::move(*answer));
}

}  // namespace bai::batch
