#include "emulator/batch/pool_nodes.h"

#include <cstdio>
#include <future>

#include "common/crypto/digest.h"
#include "common/log/logger.h"
#include "common/text/ascii.h"
#include "common/time/timestamps.h"
#include "emulator/batch/autoscale_formula.h"
#include "emulator/batch/batch_error.h"
#include "emulator/batch/command_line.h"
#include "emulator/batch/task_files.h"
#include "emulator/engine/job_run.h"
#include "emulator/engine/node_setup.h"
#include "emulator/engine/process.h"
#include "emulator/engine/writable_root.h"

namespace bai::batch {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string now_text() { return time::format_iso8601(time::now()); }

// "tvmps_" and 64 hex digits, "_d" for a dedicated node, "_p" for a low-priority one, as the
// service names them; stable for an account, pool and node number.
std::string node_id(const std::string& account, const std::string& pool, int number, bool dedicated) {
    std::string digest = crypto::hmac_sha256("batch-node", account + "/" + pool + "/" + std::to_string(number));
    std::string hex;
    char byte[3];
    for (unsigned char c : digest) {
        std::snprintf(byte, sizeof byte, "%02x", c);
        hex += byte;
    }
    return "tvmps_" + hex + (dedicated ? "_d" : "_p");
}

// 127.0.128.1 onwards: beside the Batch AI nodes' 127.0.1.x.
std::string address_of(int n) { return "127.0." + std::to_string(128 + n / 254) + "." + std::to_string(1 + n % 254); }

// A task's environmentSettings over `env`.
void add_settings(engine::Environment& env, const json& task) {
    for (const json& setting : task.value("environmentSettings", json::array())) {
        if (setting.is_object() && setting.contains("name")) env[setting.value("name", "")] = setting.value("value", "");
    }
}

json failure_exit_code() {
    return {{"category", "UserError"}, {"code", "FailureExitCode"},
            {"message", "The task exited with an exit code representing a failure"}};
}

// A task back in the queue because its node went: requeueCount counts it, retryCount does not.
void requeue_document(json& doc, const std::string& now) {
    doc["previousState"] = doc["state"];
    doc["state"] = "active";
    doc["stateTransitionTime"] = now;
    doc["executionInfo"]["requeueCount"] = doc["executionInfo"].value("requeueCount", 0) + 1;
}

// Runs a task's command line on a node as the service does (split into words, no shell), in
// its working directory with its variables; returns the exit code, or a failure (the command
// line cannot be parsed, the program cannot start).
std::pair<int, json> run_task_process(const json& task, const engine::Environment& env, const fs::path& dir,
                                      engine::RunControl& control) {
    std::optional<std::vector<std::string>> argv = split_command_line(task.value("commandLine", ""));
    if (!argv) {
        return {-1, {{"category", "UserError"}, {"code", "CommandLineParseError"},
                     {"message", "The command line has an unclosed quote or no word"}}};
    }
    try {
        std::shared_ptr<engine::Process> process = control.start({*argv, env, dir / "wd", dir / "stdout.txt", dir / "stderr.txt"});
        if (!process) return {-1, nullptr};
        return {process->wait().code, nullptr};
    } catch (const std::exception& e) {
        return {-1, {{"category", "UserError"}, {"code", "CommandProgramNotFound"}, {"message", e.what()}}};
    }
}

struct StartTaskRun {
    json info;
    bool succeeded = false;
};

// Runs the start task (and its retries) as a task is run, in startup/ (its wd/, stdout.txt,
// stderr.txt) with the node's variables and the task's own settings. A command line that cannot
// be parsed is not retried; a program that cannot start reports 127, as a shell would.
StartTaskRun run_start_task(const json& task, const engine::Environment& base, const fs::path& root,
                            engine::RunControl& control) {
    StartTaskRun run;
    run.info = {{"state", "running"}, {"startTime", now_text()}, {"retryCount", 0}};
    const int max_retries = task.value("maxTaskRetryCount", 0);
    engine::Environment env = base;
    add_settings(env, task);
    for (int attempt = 0;; ++attempt) {
        run.info["retryCount"] = attempt;
        run.info["lastRetryTime"] = now_text();
        auto [code, failure] = run_task_process(task, env, root / "startup", control);
        if (code == -1 && failure.is_null()) return run;  // the node is leaving
        if (!failure.is_null()) {
            run.info["failureInfo"] = failure;
            if (failure.value("code", "") == "CommandLineParseError") break;
            code = 127;
        }
        run.info["exitCode"] = code;
        if (code == 0) {
            run.info.erase("failureInfo");
            run.succeeded = true;
            break;
        }
        if (!run.info.contains("failureInfo")) run.info["failureInfo"] = failure_exit_code();
        if (control.cancelled() || (max_retries >= 0 && attempt >= max_retries)) break;
    }
    run.info["state"] = "completed";
    run.info["endTime"] = now_text();
    run.info["result"] = run.succeeded ? "success" : "failure";
    return run;
}

std::string run_key_of(const std::string& account, const std::string& job, const std::string& task) {
    return account + "/" + text::lower(job) + "/" + text::lower(task);
}

}  // namespace

PoolNodes::PoolNodes(EntityStore& store, fs::path root, engine::Clock* clock, engine::DeclaredWorkloads* workloads)
    : store_(store), root_(std::move(root)), clock_(clock ? *clock : real_clock_), workloads_(workloads) {}

PoolNodes::~PoolNodes() { stop(); }

void PoolNodes::start() {
    std::error_code ec;
    engine::remove_tree(root_, ec);
    fs::create_directories(root_, ec);
    // Queued before the thread starts, which takes them as one batch: on a virtual clock, how
    // often it sleeps and wakes must not depend on when they arrive.
    for (const StoredEntity& pool : store_.all(kPools)) pool_changed(pool.account, pool.body.value("id", ""));
    post([this] { recover_tasks(); });
    thread_ = std::thread([this, turn = engine::Participation(clock_)]() mutable {
        turn.begin();
        loop();
    });
}

// Tasks of active jobs wait again for a slot; those that were running when the emulator stopped
// were lost with their node, as when a node fails: requeued.
void PoolNodes::recover_tasks() {
    const std::string now = now_text();
    for (const StoredEntity& job : store_.all(kJobs)) {
        if (job.body.value("state", "") != "active") continue;
        const std::string job_id = job.body.value("id", "");
        const std::string pool_id = job.body["poolInfo"].value("poolId", "");
        std::optional<std::int64_t> next;
        for (const StoredEntity& task : store_.list(job.account, tasks_of(job_id), 0, 1 << 30, next)) {
            const std::string state = task.body.value("state", "");
            if (state != "active" && state != "running" && state != "preparing") continue;
            const std::string task_id = task.body.value("id", "");
            if (state != "active") {
                store_.update(job.account, tasks_of(job_id), task_id, [&](json& doc) {
                    requeue_document(doc, now);
                    return true;
                });
            }
            state_[{job.account, text::lower(pool_id)}].queue.push_back({job_id, task_id});
        }
        schedule({job.account, text::lower(pool_id)});
    }
}

void PoolNodes::stop() {
    if (!thread_.joinable()) return;
    clock_.set_serial(false);  // threads in a real process would hold everyone's turn
    if (!events_.stop()) return;
    thread_.join();
    for (auto& [key, run] : running_) run.control->cancel("the emulator stopped");
    for (auto& [key, run] : running_) run.thread.join();
    running_.clear();
    for (auto& [key, pool] : state_) {
        for (auto& node : pool.nodes) node->control->cancel("the emulator stopped");
        for (auto& node : pool.nodes) {
            if (node->start_task.joinable()) node->start_task.join();
        }
    }
    for (auto& node : leaving_) {
        if (node->start_task.joinable()) node->start_task.join();
    }
    leaving_.clear();
    state_.clear();
    std::error_code ec;
    engine::remove_tree(root_, ec);
}

void PoolNodes::post(std::function<void()> event) { events_.post(std::move(event)); }

void PoolNodes::loop() {
    while (auto batch = events_.take(std::nullopt)) {
        for (const auto& event : *batch) {
            try {
                event();
            } catch (const std::exception& e) {
                log::error(std::string("batch nodes: ") + e.what());
            }
        }
    }
}

void PoolNodes::pool_changed(const std::string& account, const std::string& pool_id) {
    Key key{account, text::lower(pool_id)};
    post([this, key] { reconcile(key); });
}

void PoolNodes::pool_deleting(const std::string& account, const std::string& pool_id) {
    Key key{account, text::lower(pool_id)};
    post([this, key] {
        auto it = state_.find(key);
        if (it != state_.end()) it->second.deleting = true;
        reconcile(key);
    });
}

// Brings the pool's nodes to its targets (none when it is being deleted): new nodes join; surplus
// ones leave, those not yet idle first, then idle ones, newest first.
void PoolNodes::reconcile(const Key& key) {
    std::optional<StoredEntity> stored = store_.get(key.first, kPools, key.second);
    Pool& pool = state_[key];
    pool.account = key.first;
    if (stored) pool.id = stored->body.value("id", key.second);
    if (stored && stored->body.value("enableAutoScale", false) && stored->body.value("state", "") == "active") {
        evaluate(pool, *stored);
        stored = store_.get(key.first, kPools, key.second);
    }
    if (!stored && !pool.deleting) {  // tasks of a job whose pool does not exist (yet) wait for it
        publish(key);
        return;
    }
    const bool deleting = pool.deleting || !stored || stored->body.value("state", "") == "deleting";
    for (bool dedicated : {true, false}) {
        int target = deleting ? 0 : stored->body.value(dedicated ? "targetDedicatedNodes" : "targetLowPriorityNodes", 0);
        int count = 0;
        for (auto& node : pool.nodes) count += node->dedicated == dedicated ? 1 : 0;
        for (; count < target; ++count) add_node(pool, stored->body, dedicated);
        // Nodes without tasks leave first (newest first); nodes running tasks only when the
        // deallocation option lets their tasks go (requeue, terminate: both requeue them here),
        // else they leave once their tasks are done (taskcompletion, retaineddata).
        const std::string option = deleting ? "requeue" : stored->body.value("_deallocation", "requeue");
        const bool stop_tasks = option == "requeue" || option == "terminate";
        for (bool running : {false, true}) {
            if (running && !stop_tasks) break;
            for (size_t i = pool.nodes.size(); count > target && i-- > 0;) {
                if (pool.nodes[i]->dedicated == dedicated && (pool.nodes[i]->running_tasks > 0) == running) {
                    remove_node(pool, i);
                    --count;
                }
            }
        }
    }
    if (deleting) {
        if (stored) store_.remove(key.first, kPools, key.second);
        if (!pool.queue.empty()) {  // tasks that wait for a pool of this id to come again
            pool.deleting = false;
            publish(key);
            return;
        }
        state_.erase(key);
        std::lock_guard guard(snapshot_mutex_);
        snapshot_.erase(key);
        roots_.erase(key);
        return;
    }
    write_pool(pool);
    schedule(key);
    publish(key);
}

// The emulator evaluates the formula whenever what it reads changes (a pool added or changed, a
// task added or ended, a node joining or leaving), not on a timer: its metrics have no history.
AutoScaleInputs PoolNodes::metrics_of(const Pool& pool, const StoredEntity& stored) const {
    AutoScaleInputs in = metrics_at(0);
    int running = 0, dedicated = 0, low_priority = 0;
    for (const auto& node : pool.nodes) {
        running += node->running_tasks;
        (node->dedicated ? dedicated : low_priority)++;
    }
    const double active = static_cast<double>(pool.queue.size());
    in.metrics["$PendingTasks"] = active + running;
    in.metrics["$ActiveTasks"] = active;
    in.metrics["$RunningTasks"] = running;
    in.metrics["$CurrentDedicatedNodes"] = dedicated;
    in.metrics["$CurrentLowPriorityNodes"] = low_priority;
    in.metrics["$UsableNodeCount"] = dedicated + low_priority;
    in.metrics["$SampleNodeCount"] = dedicated + low_priority;
    in.metrics["$TargetDedicatedNodes"] = stored.body.value("targetDedicatedNodes", 0);
    in.metrics["$TargetLowPriorityNodes"] = stored.body.value("targetLowPriorityNodes", 0);
    return in;
}

void PoolNodes::evaluate(Pool& pool, const StoredEntity& stored) {
    AutoScaleInputs in = metrics_of(pool, stored);
    AutoScaleResult r = evaluate_autoscale(stored.body.value("autoScaleFormula", ""), in);
    const std::string now = now_text();
    store_.update(pool.account, kPools, pool.id, [&](json& doc) {
        json run{{"timestamp", now}};
        if (r.error) {
            run["error"] = {{"code", "AutoScalingFormulaEvaluationError"}, {"message", *r.error}};
        } else {
            run["results"] = r.results;
            doc["_deallocation"] = r.deallocation;
            if (r.target_dedicated) doc["targetDedicatedNodes"] = *r.target_dedicated;
            if (r.target_low_priority) doc["targetLowPriorityNodes"] = *r.target_low_priority;
        }
        doc["autoScaleRun"] = run;
        return true;
    });
}

// What every process of the node sees (the start task and tasks add their own).
engine::Environment PoolNodes::node_environment(const Pool& pool, const Node& node) const {
    engine::Environment env = engine::node_base_environment(node.root);
    env["AZ_BATCH_ACCOUNT_NAME"] = pool.account;
    env["AZ_BATCH_POOL_ID"] = pool.id;
    env["AZ_BATCH_NODE_ID"] = node.id;
    env["AZ_BATCH_NODE_IS_DEDICATED"] = node.dedicated ? "true" : "false";
    env["AZ_BATCH_NODE_ROOT_DIR"] = node.root.string();
    env["AZ_BATCH_NODE_SHARED_DIR"] = (node.root / "shared").string();
    env["AZ_BATCH_NODE_STARTUP_DIR"] = (node.root / "startup").string();
    return env;
}

void PoolNodes::add_node(Pool& pool, const json& doc, bool dedicated) {
    auto node = std::make_unique<Node>();
    node->id = node_id(pool.account, text::lower(pool.id), pool.next_number++, dedicated);
    node->dedicated = dedicated;
    node->allocation_time = now_text();
    node->state_time = node->allocation_time;
    node->address = address_of(next_address_++);
    node->root = root_ / pool.account / text::lower(pool.id) / node->id;
    node->control = std::make_shared<engine::RunControl>();
    std::error_code ec;
    for (const char* dir : {"startup/wd", "shared", "tmp", "workitems"}) fs::create_directories(node->root / dir, ec);
    engine::Environment env = node_environment(pool, *node);
    env["AZ_BATCH_TASK_WORKING_DIR"] = (node->root / "startup" / "wd").string();
    env["AZ_BATCH_TASK_DIR"] = (node->root / "startup").string();
    const json task = doc.value("startTask", json());
    if (!task.is_object()) {
        node->state = "idle";
    } else {
        const bool wait = task.value("waitForSuccess", true);
        node->state = wait ? "waitingforstarttask" : "idle";
        node->start_task_info = {{"state", "running"}, {"startTime", now_text()}, {"retryCount", 0}};
        Key key{pool.account, text::lower(pool.id)};
        std::shared_ptr<engine::RunControl> control = node->control;
        fs::path root = node->root;
        std::string id = node->id;
        node->start_task = std::thread([this, key, id, task, env, root, control, wait,
                                        turn = engine::Participation(clock_)]() mutable {
            turn.begin();
            StartTaskRun run = run_start_task(task, env, root, *control);
            // Cancelled (the node left) it reports too: its removal ends there.
            post([this, key, id, info = run.info, ok = run.succeeded || !wait] { start_task_done(key, id, info, ok); });
        });
    }
    log::info("batch pool " + pool.id + ": node " + node->id + " joins (" + node->state + ")");
    pool.nodes.push_back(std::move(node));
}

void PoolNodes::remove_node(Pool& pool, size_t index) {
    std::unique_ptr<Node> node = std::move(pool.nodes[index]);
    pool.nodes.erase(pool.nodes.begin() + static_cast<long>(index));
    node->control->cancel("the node leaves the pool");
    log::info("batch pool " + pool.id + ": node " + node->id + " leaves");
    // Its tasks go back to the queue (requeueCount, not retryCount), as the service requeues them.
    for (auto& [key, run] : running_) {
        if (run.node_id == node->id) run.control->cancel("requeue");
    }
    if (node->start_task.joinable()) {
        // It may not have begun (on a virtual clock it needs a turn this thread holds): it reports
        // to start_task_done, which ends the removal.
        leaving_.push_back(std::move(node));
        return;
    }
    std::error_code ec;
    engine::remove_tree(node->root, ec);
}

void PoolNodes::start_task_done(const Key& key, const std::string& node_id, json info, bool succeeded) {
    for (auto left = leaving_.begin(); left != leaving_.end(); ++left) {
        if ((*left)->id != node_id) continue;
        (*left)->start_task.join();  // it has posted this and left the clock's turns
        std::error_code ec;
        engine::remove_tree((*left)->root, ec);
        leaving_.erase(left);
        return;
    }
    auto it = state_.find(key);
    if (it == state_.end()) return;
    for (auto& node : it->second.nodes) {
        if (node->id != node_id) continue;
        if (node->start_task.joinable()) node->start_task.join();
        node->start_task_info = std::move(info);
        if (node->state == "waitingforstarttask" || !succeeded) {
            node->state = succeeded ? "idle" : "starttaskfailed";
            node->state_time = now_text();
        }
        write_pool(it->second);
        schedule(key);
        publish(key);
        return;
    }
}

void PoolNodes::task_added(const std::string& account, const std::string& pool_id, const std::string& job_id,
                           const std::string& task_id) {
    Key key{account, text::lower(pool_id)};
    post([this, key, job_id, task_id] {
        state_[key].queue.push_back({job_id, task_id});
        reconcile(key);  // schedules it; an auto-scale pool evaluates its formula first
    });
}

// Each node takes tasks while it has free slots (taskSlotsPerNode), once its start task lets it.
void PoolNodes::schedule(const Key& key) {
    auto it = state_.find(key);
    if (it == state_.end() || it->second.queue.empty() || it->second.deleting) return;
    Pool& pool = it->second;
    std::optional<StoredEntity> stored = store_.get(key.first, kPools, key.second);
    if (!stored || stored->body.value("state", "") != "active") return;
    const int slots = std::max(1, stored->body.value("taskSlotsPerNode", 1));
    for (auto& node : pool.nodes) {
        while (!pool.queue.empty() && (node->state == "idle" || node->state == "running") && node->running_tasks < slots) {
            TaskRef task = pool.queue.front();
            pool.queue.pop_front();
            run_task(pool, *node, task);
        }
    }
}

void PoolNodes::run_task(Pool& pool, Node& node, const TaskRef& ref) {
    const std::string scope = tasks_of(ref.job_id);
    const fs::path dir = node.root / "workitems" / ref.job_id / "job-1" / ref.task_id;
    const std::string now = now_text();
    json task;
    std::optional<StoredEntity> updated = store_.update(pool.account, scope, ref.task_id, [&](json& doc) {
        if (doc.value("state", "") != "active") return false;
        doc["previousState"] = "active";
        doc["state"] = "running";
        doc["stateTransitionTime"] = now;
        doc["previousStateTransitionTime"] = doc.value("stateTransitionTime", now);
        json& info = doc["executionInfo"];
        info["startTime"] = now;
        info.erase("endTime");
        info.erase("exitCode");
        info.erase("result");
        info.erase("failureInfo");
        doc["nodeInfo"] = {{"affinityId", "TVM:" + node.id},
                           {"poolId", pool.id},
                           {"nodeId", node.id},
                           {"taskRootDirectory", "workitems/" + ref.job_id + "/job-1/" + ref.task_id}};
        doc["_root"] = dir.string();
        task = doc;
        return true;
    });
    if (!updated || task.is_null()) return;  // deleted, or no longer waiting
    std::error_code ec;
    fs::create_directories(dir / "wd", ec);
    engine::Environment env = node_environment(pool, node);
    env["AZ_BATCH_JOB_ID"] = ref.job_id;
    env["AZ_BATCH_TASK_ID"] = ref.task_id;
    env["AZ_BATCH_TASK_DIR"] = dir.string();
    env["AZ_BATCH_TASK_WORKING_DIR"] = (dir / "wd").string();
    add_settings(env, task);
    node.running_tasks++;
    node.total_tasks_run++;
    node.state = "running";
    node.state_time = now;
    const std::string run_key = run_key_of(pool.account, ref.job_id, ref.task_id);
    RunningTask& run = running_[run_key];
    run.account = pool.account;
    run.task = ref;
    run.node_id = node.id;
    run.control = std::make_shared<engine::RunControl>();
    std::shared_ptr<engine::RunControl> control = run.control;
    run.thread = std::thread([this, task, env, dir, control, run_key, turn = engine::Participation(clock_)]() mutable {
        turn.begin();
        int code = -1;
        json failure;
        if (std::optional<json> missing = download_resource_files(task, dir / "wd")) {
            failure = *missing;
        } else {
            std::optional<engine::JobOutcome> played;
            if (workloads_) {
                engine::WorkloadContext context{run_key, env, [](const std::string& path) { return fs::path(path); },
                                                dir / "stdout.txt", clock_.now(), clock_, *control};
                played = workloads_->play(task.value("commandLine", ""), context);
            }
            if (played) {
                code = played->exit_code.value_or(-1);
            } else {
                std::tie(code, failure) = run_task_process(task, env, dir, *control);
            }
            if (!control->cancelled()) {
                if (std::optional<json> upload = upload_output_files(task, dir, code == 0 && failure.is_null())) failure = *upload;
            }
        }
        post([this, run_key, code, failure] { task_done(run_key, code, failure); });
    });
}

// A task's process ended: completed (success or failure once its retries are spent), active
// again for a retry, or, when it was stopped (its node left, its job is deleted), what that says.
void PoolNodes::task_done(const std::string& run_key, int exit_code, json failure) {
    auto it = running_.find(run_key);
    if (it == running_.end()) return;
    RunningTask run = std::move(it->second);
    running_.erase(it);
    run.thread.join();
    const std::string reason = run.control->reason();
    const std::string now = now_text();
    Key pool_key;
    for (auto& [key, pool] : state_) {
        for (auto& node : pool.nodes) {
            if (node->id != run.node_id) continue;
            pool_key = key;
            node->running_tasks--;
            if (exit_code == 0 && failure.is_null() && reason.empty()) node->total_tasks_succeeded++;
            if (node->running_tasks == 0 && node->state == "running") {
                node->state = "idle";
                node->state_time = now;
            }
        }
    }
    const std::string scope = tasks_of(run.task.job_id);
    bool retry = false;
    if (reason == "job deleted") {
        // nothing to write: the job and its tasks are going
    } else if (reason == "requeue") {
        store_.update(run.account, scope, run.task.task_id, [&](json& doc) {
            requeue_document(doc, now);
            return true;
        });
        retry = true;
    } else {
        store_.update(run.account, scope, run.task.task_id, [&](json& doc) {
            json& info = doc["executionInfo"];
            const int retries = info.value("retryCount", 0);
            const int limit = doc["constraints"].value("maxTaskRetryCount", 0);
            doc["previousState"] = doc["state"];
            doc["previousStateTransitionTime"] = doc.value("stateTransitionTime", now);
            doc["stateTransitionTime"] = now;
            info["endTime"] = now;
            if (exit_code >= 0) info["exitCode"] = exit_code;
            if (exit_code == 0 && failure.is_null()) {
                doc["state"] = "completed";
                info["result"] = "success";
                return true;
            }
            info["failureInfo"] = failure.is_null() ? failure_exit_code() : failure;
            if (limit == -1 || retries < limit) {
                doc["state"] = "active";
                info["retryCount"] = retries + 1;
                info["lastRetryTime"] = now;
                retry = true;
            } else {
                doc["state"] = "completed";
                info["result"] = "failure";
            }
            return true;
        });
    }
    if (pool_key.first.empty()) {  // its node has left: the pool is the job's
        std::optional<StoredEntity> job = store_.get(run.account, kJobs, run.task.job_id);
        if (job) pool_key = {run.account, text::lower(job->body["poolInfo"].value("poolId", ""))};
    }
    auto pool = state_.find(pool_key);
    if (pool == state_.end()) return;
    if (retry) pool->second.queue.push_back(run.task);
    reconcile(pool_key);
}

void PoolNodes::job_deleting(const std::string& account, const std::string& job_id) {
    post([this, account, job_id] {
        const std::string prefix = account + "/" + text::lower(job_id) + "/";
        for (auto& [key, run] : running_) {
            if (key.rfind(prefix, 0) == 0) run.control->cancel("job deleted");
        }
        for (auto& [key, pool] : state_) {
            if (key.first != account) continue;
            std::erase_if(pool.queue, [&](const TaskRef& t) { return text::iequals(t.job_id, job_id); });
        }
        // The documents go now; running tasks report to task_done, which writes nothing for them.
        store_.remove_scope(account, tasks_of(job_id));
        store_.remove(account, kJobs, job_id);
    });
}

void PoolNodes::write_pool(const Pool& pool) {
    int dedicated = 0, low_priority = 0;
    for (const auto& node : pool.nodes) (node->dedicated ? dedicated : low_priority)++;
    store_.update(pool.account, kPools, pool.id, [&](json& doc) {
        const bool steady = dedicated == doc.value("targetDedicatedNodes", 0) &&
                            low_priority == doc.value("targetLowPriorityNodes", 0);
        const std::string allocation = steady ? "steady" : "resizing";
        if (doc.value("currentDedicatedNodes", -1) == dedicated && doc.value("currentLowPriorityNodes", -1) == low_priority &&
            doc.value("allocationState", "") == allocation) {
            return false;
        }
        doc["currentDedicatedNodes"] = dedicated;
        doc["currentLowPriorityNodes"] = low_priority;
        if (doc.value("allocationState", "") != allocation) {
            doc["allocationState"] = allocation;
            doc["allocationStateTransitionTime"] = now_text();
        }
        return true;
    });
}

void PoolNodes::publish(const Key& key) {
    auto it = state_.find(key);
    json nodes = json::array();
    std::map<std::string, fs::path> roots;
    if (it != state_.end()) {
        std::optional<StoredEntity> stored = store_.get(key.first, kPools, key.second);
        const std::string vm_size = stored ? stored->body.value("vmSize", "") : "";
        for (const auto& node : it->second.nodes) {
            json n{{"id", node->id},
                   {"state", node->state},
                   {"schedulingState", "enabled"},
                   {"stateTransitionTime", node->state_time},
                   {"allocationTime", node->allocation_time},
                   {"ipAddress", node->address},
                   {"affinityId", "TVM:" + node->id},
                   {"vmSize", vm_size},
                   {"totalTasksRun", node->total_tasks_run},
                   {"runningTasksCount", node->running_tasks},
                   {"runningTaskSlotsCount", node->running_tasks},
                   {"totalTasksSucceeded", node->total_tasks_succeeded},
                   {"isDedicated", node->dedicated},
                   {"nodeAgentInfo", {{"version", "1.9.27"}, {"lastUpdateTime", node->allocation_time}}}};
            if (!node->start_task_info.is_null()) n["startTaskInfo"] = node->start_task_info;
            nodes.push_back(std::move(n));
            roots[node->id] = node->root;
        }
    }
    std::lock_guard guard(snapshot_mutex_);
    snapshot_[key] = std::move(nodes);
    roots_[key] = std::move(roots);
}

template <typename T>
T PoolNodes::ask(std::function<T()> question) {
    auto result = std::make_shared<std::promise<T>>();
    std::future<T> future = result->get_future();
    post([question, result] {
        try {
            result->set_value(question());
        } catch (...) {
            result->set_exception(std::current_exception());
        }
    });
    if (future.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
        throw BatchError(500, "InternalServerError", "The Batch nodes did not answer");
    }
    return future.get();
}

std::optional<json> PoolNodes::preempt(const std::string& account, const std::string& pool_id, const std::string& node_id) {
    Key key{account, text::lower(pool_id)};
    return ask<std::optional<json>>([this, key, node_id]() -> std::optional<json> {
        auto it = state_.find(key);
        if (it == state_.end()) return std::nullopt;
        Pool& pool = it->second;
        for (size_t i = 0; i < pool.nodes.size(); ++i) {
            if (pool.nodes[i]->id != node_id) continue;
            if (pool.nodes[i]->dedicated) {
                throw BatchError(409, "NodeNotLowPriority", "Only low-priority nodes are pre-empted; " + node_id + " is dedicated.");
            }
            json requeued = json::array();
            for (auto& [run_key, run] : running_) {
                if (run.node_id == node_id) requeued.push_back(run.task.job_id + "/" + run.task.task_id);
            }
            log::info("batch pool " + pool.id + ": node " + node_id + " is pre-empted");
            remove_node(pool, i);
            reconcile(key);
            return json{{"nodeId", node_id}, {"requeuedTasks", requeued}};
        }
        return std::nullopt;
    });
}

AutoScaleResult PoolNodes::try_formula(const std::string& account, const std::string& pool_id, const std::string& formula) {
    Key key{account, text::lower(pool_id)};
    return ask<AutoScaleResult>([this, key, formula] {
        std::optional<StoredEntity> stored = store_.get(key.first, kPools, key.second);
        Pool empty;
        auto it = state_.find(key);
        const Pool& pool = it == state_.end() ? empty : it->second;
        return evaluate_autoscale(formula, stored ? metrics_of(pool, *stored) : metrics_at(0));
    });
}

json PoolNodes::nodes(const std::string& account, const std::string& pool_id) const {
    std::lock_guard guard(snapshot_mutex_);
    auto it = snapshot_.find({account, text::lower(pool_id)});
    return it == snapshot_.end() ? json::array() : it->second;
}

std::optional<fs::path> PoolNodes::node_root(const std::string& account, const std::string& pool_id,
                                             const std::string& node_id) const {
    std::lock_guard guard(snapshot_mutex_);
    auto it = roots_.find({account, text::lower(pool_id)});
    if (it == roots_.end()) return std::nullopt;
    auto node = it->second.find(node_id);
    if (node == it->second.end()) return std::nullopt;
    return node->second;
}

}  // namespace bai::batch
