// The Batch nodes' side of jobs and tasks: a task waits in its pool's queue for a free slot, runs
// on a node (resource files, its command line or a declared workload, output files), ends
// (completed, retried, requeued, terminated, out of wall-clock time), keeps its directory for its
// retentionTime; a job completes when terminated, when its tasks are all complete
// (onAllTasksComplete) or when a task's exit conditions say so; its maxWallClockTime runs from
// when it was added.
#include <set>

#include "common/log/logger.h"
#include "common/text/ascii.h"
#include "common/time/timestamps.h"
#include "emulator/batch/pool_nodes.h"
#include "emulator/batch/multi_instance.h"
#include "emulator/batch/node_certificates.h"
#include "emulator/batch/work_rules.h"
#include "emulator/batch/task_files.h"
#include "emulator/batch/task_process.h"
#include "emulator/batch/task_states.h"
#include "emulator/engine/job_run.h"
#include "emulator/engine/writable_root.h"

namespace bai::batch {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string run_key_of(const std::string& account, const std::string& job, const std::string& task) {
    return account + "/" + text::lower(job) + "/" + text::lower(task);
}

std::string job_prefix(const std::string& account, const std::string& job) { return account + "/" + text::lower(job) + "/"; }

// A job's maxWallClockTime runs while it is active or disabled.
bool counts_wall_clock(const StoredEntity& job) {
    const std::string state = job.body.value("state", "");
    return state == "active" || state == "disabled";
}

// A task's directories: on its node, and a multi-instance task's on its other nodes.
void remove_task_dirs(const json& task) {
    std::error_code ec;
    if (task.contains("_root")) engine::remove_tree(task.value("_root", ""), ec);
    for (const json& dir : task.value("_subtask_roots", json::array())) {
        if (dir.is_string()) engine::remove_tree(dir.get<std::string>(), ec);
    }
}

// How a task's run on its node (or nodes) ended.
struct RunEnd {
    int exit_code = -1;      // -1: none
    json failure;            // failureInfo, null when none
    json subtasks;           // a multi-instance task's SubtaskInformation
    json container;          // TaskContainerExecutionInformation, null when it ran in none
    bool ran_command = true;  // false: it ended before its command (a resource file failed)
};

// Runs `run` (the task's command), then uploads its output files unless it was stopped or
// never got to its command. Nothing of a task may take the daemon down: an exception ends it as
// the service's ServerError.
RunEnd run_then_upload(const json& task, const fs::path& dir, const engine::RunControl& control, const std::function<RunEnd()>& run) {
    RunEnd end;
    try {
        end = run();
        if (end.ran_command && !control.cancelled()) {
            if (std::optional<json> upload = upload_output_files(task, dir, end.exit_code == 0 && end.failure.is_null())) {
                end.failure = *upload;
            }
        }
    } catch (const std::exception& e) {
        end.exit_code = -1;
        end.failure = failure_info("TaskRunFailed", std::string("The emulator could not run the task: ") + e.what(), "ServerError");
    }
    return end;
}

}  // namespace

void PoolNodes::queue_job_tasks(const StoredEntity& job) {
    const std::string job_id = job.body.value("id", "");
    const Key key{job.account, text::lower(pool_of_job(job.body))};
    std::deque<TaskRef>& queue = state_[key].queue;
    std::set<std::string> queued;  // lower-cased task ids of the job's already in the queue
    for (const TaskRef& t : queue) {
        if (text::iequals(t.job_id, job_id)) queued.insert(text::lower(t.task_id));
    }
    store_.for_each_in_scope(job.account, tasks_of(job_id), [&](StoredEntity& task) {
        if (task.body.value("state", "") != "active") return;
        const std::string task_id = task.body.value("id", "");
        if (running_.count(run_key_of(job.account, job_id, task_id))) return;
        if (queued.insert(text::lower(task_id)).second) queue.push_back(task_ref(job_id, task.body));
    });
    schedule(key);
}

// Tasks that were running when the emulator stopped were lost with their node, as when a node
// fails: requeued (ended, when their job was being terminated). Tasks of active jobs wait again
// for a slot; a job being terminated or deleted goes on with it.
void PoolNodes::recover_tasks() {
    const std::string now = time::now_iso8601();
    for (const StoredEntity& job : store_.all(kJobs)) {
        const std::string job_id = job.body.value("id", "");
        const std::string state = job.body.value("state", "");
        std::vector<std::string> lost;  // written once the pages are read
        store_.for_each_in_scope(job.account, tasks_of(job_id), [&](StoredEntity& task) {
            const std::string task_state = task.body.value("state", "");
            if (task_state == "running" || task_state == "preparing") lost.push_back(task.body.value("id", ""));
        });
        for (const std::string& task_id : lost) {
            store_.update(job.account, tasks_of(job_id), task_id, [&](json& doc) {
                if (state == "terminating") {
                    end_without_retry(doc, task_ended(), now);
                } else {
                    requeue_document(doc, now);
                }
                return true;
            });
        }
        if (state == "terminating") terminate_job(job.account, job_id, "");
        if (state == "deleting") job_deleting(job.account, job_id);
        if (state == "active") queue_job_tasks(job);
        arm_job_clock(job.account, job_id);
    }
}

void PoolNodes::task_added(const std::string& account, const std::string& pool_id, const std::string& job_id, const json& task) {
    Key key{account, text::lower(pool_id)};
    post([this, key, ref = task_ref(job_id, task)] {
        state_[key].queue.push_back(ref);
        reconcile(key);  // schedules it; an auto-scale pool evaluates its formula first
    });
}

// Each node takes tasks while it has free slots (taskSlotsPerNode), once its start task lets it,
// unless its scheduling is disabled or it is about to leave or reboot.
void PoolNodes::schedule(const Key& key) {
    auto it = state_.find(key);
    if (it == state_.end() || it->second.queue.empty() || it->second.deleting) return;
    Pool& pool = it->second;
    std::optional<StoredEntity> stored = store_.get(key.first, kPools, key.second);
    if (!stored || stored->body.value("state", "") != "active") return;
    const int slots = std::max(1, stored->body.value("taskSlotsPerNode", 1));
    // A task whose earlier run (of a task deleted and added again under its id) has not reported
    // yet stays queued: its task_done schedules again.
    // (And a task whose job's preparation the node has not done waits for it: job_preparation.cpp.)
    // (And one that depends on others waits for them.)
    std::map<std::string, std::optional<json>> jobs;
    std::map<std::string, bool> satisfied;
    schedule_multi_instance(pool, stored->body, jobs, satisfied);
    auto next_ready = [&](Node& node) {
        return std::find_if(pool.queue.begin(), pool.queue.end(), [&](const TaskRef& t) {
            return t.instances == 0 && (!t.exclusive || node.running_tasks == 0) && (!t.dedicated_only || node.dedicated) &&
                   !running_.count(run_key_of(pool.account, t.job_id, t.task_id)) &&
                   (!t.dependent || dependencies_met(pool.account, t, satisfied)) &&
                   preparation_allows(pool, node, t.job_id, stored->body, jobs);
        });
    };
    for (auto& node : pool.nodes) {
        if (!node->scheduling || node->then != Node::Then::nothing) continue;
        while ((node->state == "idle" || node->state == "running") && node->running_tasks < slots && !node->exclusive) {
            auto ready = next_ready(*node);
            if (ready == pool.queue.end()) return;
            TaskRef task = *ready;
            pool.queue.erase(ready);
            run_task(pool, {node.get()}, task, stored->body);
        }
    }
}

bool PoolNodes::dependencies_met(const std::string& account, const TaskRef& ref, std::map<std::string, bool>& known) {
    const std::string own = text::lower(ref.job_id) + "/" + text::lower(ref.task_id) + "/waits";
    if (auto cached = known.find(own); cached != known.end()) return cached->second;
    std::optional<StoredEntity> task = store_.get(account, tasks_of(ref.job_id), ref.task_id);
    bool met = task.has_value();
    for (const std::string& id : task ? dependency_ids(task->body) : std::vector<std::string>{}) {
        const std::string key = text::lower(ref.job_id) + "/" + text::lower(id);
        auto cached = known.find(key);
        if (cached == known.end()) {
            std::optional<StoredEntity> other = store_.get(account, tasks_of(ref.job_id), id);
            cached = known.emplace(key, other && satisfies_dependents(other->body)).first;
        }
        if (!cached->second) {
            met = false;
            break;
        }
    }
    known[own] = met;
    return met;
}

PoolNodes::TaskRef PoolNodes::task_ref(const std::string& job_id, const json& task) {
    TaskRef ref{job_id, task.value("id", ""), task.contains("dependsOn")};
    ref.exclusive = task.value("_runExclusive", false);
    ref.dedicated_only = !task.value("_allowLowPriorityNode", true);
    if (task.contains("multiInstanceSettings")) ref.instances = std::max(1, task["multiInstanceSettings"].value("numberOfInstances", 1));
    return ref;
}

// The service runs multi-instance tasks only in pools with inter-node communication and one task
// slot per node; elsewhere they stay active.
void PoolNodes::schedule_multi_instance(Pool& pool, const json& pool_doc, std::map<std::string, std::optional<json>>& jobs,
                                        std::map<std::string, bool>& satisfied) {
    if (!pool_doc.value("enableInterNodeCommunication", false) || pool_doc.value("taskSlotsPerNode", 1) != 1) return;
    for (auto it = pool.queue.begin(); it != pool.queue.end();) {
        if (it->instances == 0 || running_.count(run_key_of(pool.account, it->job_id, it->task_id)) ||
            (it->dependent && !dependencies_met(pool.account, *it, satisfied))) {
            ++it;
            continue;
        }
        std::vector<Node*> idle;
        for (auto& node : pool.nodes) {
            if (static_cast<int>(idle.size()) == it->instances) break;
            if (node->scheduling && node->then == Node::Then::nothing && node->state == "idle" && node->running_tasks == 0 &&
                preparation_allows(pool, *node, it->job_id, pool_doc, jobs)) {
                idle.push_back(node.get());
            }
        }
        if (static_cast<int>(idle.size()) < it->instances) {
            ++it;
            continue;
        }
        const TaskRef task = *it;
        it = pool.queue.erase(it);
        run_task(pool, idle, task, pool_doc);
    }
}

engine::Environment PoolNodes::task_environment(const Pool& pool, const Node& node, const json& job, const json& task,
                                                const fs::path& dir, const json& pool_doc) {
    std::error_code ec;
    fs::create_directories(dir / "wd", ec);
    install_certificates(store_, pool.account, pool_doc, dir / "certs", "task");
    engine::Environment env = node_environment(pool, node);
    env["AZ_BATCH_CERTIFICATES_DIR"] = node.image.view(node.root, dir / "certs");
    // The pool's application packages and the task's own.
    const auto view = [&node](const fs::path& p) { return node.image.view(node.root, p); };
    packages_.install(pool.account, pool_doc.value("applicationPackageReferences", json::array()), node.root, env, view);
    const std::string job_id = job.value("id", "");
    env["AZ_BATCH_JOB_ID"] = job_id;
    env["AZ_BATCH_TASK_ID"] = task.value("id", "");
    if (job.contains("jobPreparationTask")) {
        const fs::path prep = node.root / "workitems" / job_id / "job-1" / "jobpreparation";
        env["AZ_BATCH_JOB_PREP_DIR"] = node.image.view(node.root, prep);
        env["AZ_BATCH_JOB_PREP_WORKING_DIR"] = node.image.view(node.root, prep / "wd");
    }
    env["AZ_BATCH_TASK_DIR"] = node.image.view(node.root, dir);
    env["AZ_BATCH_TASK_WORKING_DIR"] = node.image.view(node.root, dir / "wd");
    packages_.install(pool.account, task.value("applicationPackageReferences", json::array()), node.root, env, view);
    add_settings(env, task);
    return env;
}

void PoolNodes::run_task(Pool& pool, const std::vector<Node*>& nodes, const TaskRef& ref, const json& pool_doc) {
    std::optional<StoredEntity> job = store_.get(pool.account, kJobs, ref.job_id);
    if (!job || job->body.value("state", "") != "active") return;  // it stays active, not run
    const std::string scope = tasks_of(ref.job_id);
    const std::string task_root = "workitems/" + ref.job_id + "/job-1/" + ref.task_id;
    std::vector<fs::path> dirs;
    std::vector<json> node_infos;
    for (const Node* node : nodes) {
        dirs.push_back(node->root / task_root);
        node_infos.push_back({{"affinityId", "TVM:" + node->id},
                              {"poolId", pool.id},
                              {"nodeId", node->id},
                              // Under the account's URL, which the API puts before it (as the request addressed it).
                              {"nodeUrl", "pools/" + pool.id + "/nodes/" + node->id},
                              {"taskRootDirectory", task_root}});
    }
    Node& node = *nodes[0];
    const fs::path dir = dirs[0];
    const std::string now = time::now_iso8601();
    json task;
    std::optional<StoredEntity> updated = store_.update(pool.account, scope, ref.task_id, [&](json& doc) {
        if (doc.value("state", "") != "active") return false;
        doc["previousState"] = "active";
        doc["previousStateTransitionTime"] = doc.value("stateTransitionTime", now);
        doc["state"] = "running";
        doc["stateTransitionTime"] = now;
        json& info = doc["executionInfo"];
        info["startTime"] = now;
        info.erase("endTime");
        info.erase("exitCode");
        info.erase("result");
        info.erase("failureInfo");
        info.erase("containerInfo");
        doc["nodeInfo"] = node_infos[0];
        doc["_root"] = dir.string();
        if (ref.instances > 0) {
            doc["_subtasks"] = running_subtasks(node_infos, now);
            doc["_subtask_roots"] = json::array();
            for (size_t i = 1; i < dirs.size(); ++i) doc["_subtask_roots"].push_back(dirs[i].string());
        }
        task = doc;
        return true;
    });
    if (!updated || task.is_null()) return;  // deleted, or no longer waiting
    std::vector<engine::Environment> envs;
    for (size_t i = 0; i < nodes.size(); ++i) envs.push_back(task_environment(pool, *nodes[i], job->body, task, dirs[i], pool_doc));
    for (Node* n : nodes) {
        if (ref.exclusive) n->exclusive = true;
        n->running_tasks++;
        n->total_tasks_run++;
        n->state = "running";
        n->state_time = now;
    }
    const std::string run_key = run_key_of(pool.account, ref.job_id, ref.task_id);
    RunningTask& run = running_[run_key];
    run.account = pool.account;
    run.task = ref;
    run.node_id = node.id;
    run.subtask_nodes.clear();
    run.subtask_dirs.clear();
    for (size_t i = 1; i < nodes.size(); ++i) {
        run.subtask_nodes.push_back(nodes[i]->id);
        run.subtask_dirs.push_back(dirs[i]);
    }
    run.dir = dir;
    run.serial = ++next_serial_;
    run.started = clock_.now();
    run.control = std::make_shared<engine::RunControl>();
    std::shared_ptr<engine::RunControl> control = run.control;
    if (ref.instances > 0) {
        std::vector<TaskInstance> instances;
        for (size_t i = 0; i < nodes.size(); ++i) {
            instances.push_back({nodes[i]->id, nodes[i]->address, nodes[i]->root, dirs[i], nodes[i]->image, wrap_for(*nodes[i]),
                                 envs[i], node_infos[i]});
        }
        add_instance_variables(instances);
        run.thread = std::thread([this, task, instances = std::move(instances), dir, control, run_key, node_ssh = node_ssh_,
                                  scratch = root_ / ".multi-instance" / std::to_string(run.serial),
                                  turn = engine::Participation(clock_)]() mutable {
            turn.begin();
            const RunEnd end = run_then_upload(task, dir, *control, [&] {
                MultiInstanceResult result = run_multi_instance(task, instances, *control, node_ssh, scratch);
                return RunEnd{result.exit_code, std::move(result.failure), std::move(result.subtasks)};
            });
            post([this, run_key, end] { task_done(run_key, end.exit_code, end.failure, end.subtasks); });
        });
        trace("batch task " + ref.job_id + "/" + ref.task_id, "runs on " + std::to_string(nodes.size()) + " nodes, its primary on " + node.id);
        arm_wall_clock(run_key);
        return;
    }
    const engine::Environment env = envs[0];
    run.thread = std::thread([this, task, env, dir, control, run_key, wrap = wrap_for(node), image = node.image, node_root = node.root,
                              containers = containers_for(pool_doc, node), turn = engine::Participation(clock_)]() mutable {
        turn.begin();
        const RunEnd end = run_then_upload(task, dir, *control, [&] {
            RunEnd ran;
            if (std::optional<json> missing = download_resource_files(task, dir / "wd")) {
                ran.failure = *missing;
                ran.ran_command = false;
                return ran;
            }
            std::optional<engine::JobOutcome> played;
            if (workloads_) {
                auto to_host = [&](const std::string& path) { return image.host(node_root, path).value_or(fs::path(path)); };
                engine::WorkloadContext context{run_key, env, to_host, dir / "stdout.txt", clock_.now(), clock_, *control};
                played = workloads_->play(task.value("commandLine", ""), context);
            }
            if (played) {
                ran.exit_code = played->exit_code.value_or(-1);
            } else {
                std::tie(ran.exit_code, ran.failure) =
                    run_task_process(task, env, dir, *control, wrap, containers ? &*containers : nullptr, &ran.container);
            }
            return ran;
        });
        post([this, run_key, end] { task_done(run_key, end.exit_code, end.failure, nullptr, end.container); });
    });
    trace("batch task " + ref.job_id + "/" + ref.task_id, "runs on " + node.id);
    arm_wall_clock(run_key);
}

// The running task's maxWallClockTime, counted from its start, read again when the timer fires
// (an update may have changed it).
void PoolNodes::arm_wall_clock(const std::string& run_key) {
    auto it = running_.find(run_key);
    if (it == running_.end()) return;
    std::optional<StoredEntity> task = store_.get(it->second.account, tasks_of(it->second.task.job_id), it->second.task.task_id);
    if (!task) return;
    std::optional<std::chrono::seconds> limit = limit_of(task->body.value("constraints", json::object()), "maxWallClockTime");
    if (!limit) return;
    const std::uint64_t serial = it->second.serial;
    at(it->second.started + *limit, [this, run_key, serial] {
        auto run = running_.find(run_key);
        if (run == running_.end() || run->second.serial != serial || run->second.control->cancelled()) return;
        std::optional<StoredEntity> doc = store_.get(run->second.account, tasks_of(run->second.task.job_id), run->second.task.task_id);
        std::optional<std::chrono::seconds> now_limit =
            doc ? limit_of(doc->body.value("constraints", json::object()), "maxWallClockTime") : std::nullopt;
        if (!now_limit) return;
        if (clock_.now() < run->second.started + *now_limit) return arm_wall_clock(run_key);
        log::info("batch task " + run_key + ": past its maxWallClockTime, terminated");
        run->second.control->cancel("wallclock");
    });
}

void PoolNodes::task_changed(const std::string& account, const std::string& job_id, const std::string& task_id) {
    post([this, key = run_key_of(account, job_id, task_id)] { arm_wall_clock(key); });
}

// A task's process ended: completed (success or failure once its retries are spent), active
// again for a retry, or, when it was stopped (its node left, it or its job was terminated or
// deleted, its wall-clock time ran out), what that says.
void PoolNodes::task_done(const std::string& run_key, int exit_code, json failure, json subtasks, json container) {
    auto it = running_.find(run_key);
    if (it == running_.end()) return;
    RunningTask run = std::move(it->second);
    running_.erase(it);
    for (auto& [key, pool] : state_) pool.stopping.erase(run_key);
    run.thread.join();
    const std::string reason = run.control->reason();
    const std::string now = time::now_iso8601();
    Key pool_key;
    std::vector<Node*> nodes;  // those it ran on that are still there
    for (auto& [key, pool] : state_) {
        for (auto& candidate : pool.nodes) {
            if (!run.on(candidate->id)) continue;
            pool_key = key;
            nodes.push_back(candidate.get());
        }
    }
    for (Node* node : nodes) {
        if (run.task.exclusive) node->exclusive = false;
        node->running_tasks--;
        if (exit_code == 0 && failure.is_null() && reason.empty()) node->total_tasks_succeeded++;
        if (node->running_tasks == 0 && node->state == "running") {
            node->state = "idle";
            node->state_time = now;
        }
    }
    const std::string scope = tasks_of(run.task.job_id);
    bool retry = false;
    std::optional<StoredEntity> written;
    if (reason == "job deleted" || reason == "task deleted") {
        std::error_code ec;  // the job and its tasks, or the task, are going
        engine::remove_tree(run.dir, ec);
        for (const fs::path& dir : run.subtask_dirs) engine::remove_tree(dir, ec);
    } else if (reason == "requeue") {
        written = store_.update(run.account, scope, run.task.task_id, [&](json& doc) {
            requeue_document(doc, now);
            if (!subtasks.is_null()) doc["_subtasks"] = subtasks;
            return true;
        });
        retry = true;
    } else {
        written = store_.update(run.account, scope, run.task.task_id, [&](json& doc) {
            if (reason == "terminate") {
                end_without_retry(doc, task_ended(), now);
            } else if (reason == "wallclock") {
                end_without_retry(doc, wall_clock_expired(), now);
            } else {
                retry = end_run(doc, exit_code, failure, now);
            }
            if (!container.is_null()) doc["executionInfo"]["containerInfo"] = container;
            if (!subtasks.is_null()) doc["_subtasks"] = subtasks;
            return true;
        });
    }
    const std::string actor = "batch task " + run.task.job_id + "/" + run.task.task_id;
    if (!written) {
        trace(actor, reason.empty() ? "ends" : "is stopped (" + reason + ")");
    } else if (written->body.value("state", "") != "completed") {
        const json& info = written->body["executionInfo"];
        trace(actor, reason == "requeue" ? "is requeued (requeueCount " + std::to_string(info.value("requeueCount", 0)) + ")"
                                         : "is retried (retryCount " + std::to_string(info.value("retryCount", 0)) + ")");
    } else {
        const json& info = written->body["executionInfo"];
        std::string how = "completes: " + info.value("result", "");
        if (info.contains("exitCode")) how += ", exit code " + std::to_string(info.value("exitCode", 0));
        if (info.contains("failureInfo")) how += ", " + info["failureInfo"].value("code", "");
        trace(actor, how);
    }
    if (written && written->body.value("state", "") == "completed") task_completed(run.account, run.task.job_id, written->body);
    finish_job_if_idle(run.account, run.task.job_id);
    if (pool_key.first.empty()) {  // its node has left: the pool is the job's
        std::optional<StoredEntity> job = store_.get(run.account, kJobs, run.task.job_id);
        if (job) pool_key = {run.account, text::lower(pool_of_job(job->body))};
    }
    if (pool_key.first.empty()) return;  // its job is gone too
    // A retry waits in its pool's queue, also for a pool of that id to come again.
    if (retry) state_[pool_key].queue.push_back(run.task);
    if (!state_.count(pool_key)) return;
    for (Node* node : nodes) {
        if (node->running_tasks == 0) node_drained(pool_key, *node);  // may remove it
    }
    reconcile(pool_key);
}

// Its directory stays for its retentionTime (then goes, and with it its files), and its job may
// now be done.
void PoolNodes::task_completed(const std::string& account, const std::string& job_id, const json& task) {
    const std::string task_id = task.value("id", "");
    const std::string dir = task.value("_root", "");
    std::optional<std::chrono::seconds> keep = limit_of(task.value("constraints", json::object()), "retentionTime");
    if (!dir.empty() && keep) {
        at(clock_.now() + *keep, [this, account, job_id, task_id, dir] {
            json removed;
            std::optional<StoredEntity> now = store_.update(account, tasks_of(job_id), task_id, [&](json& doc) {
                if (doc.value("state", "") != "completed" || doc.value("_root", "") != dir) return false;
                removed = doc;
                doc.erase("_root");
                doc.erase("_subtask_roots");
                return true;
            });
            if (now) remove_task_dirs(removed);
        });
    }
    std::optional<StoredEntity> job = store_.get(account, kJobs, job_id);
    if (!job || job->body.value("state", "") != "active") return;
    // The job's manager task ending ends the job (killJobOnCompletion, true by default).
    const json manager = job->body.value("jobManagerTask", json());
    if (manager.is_object() && text::iequals(manager.value("id", ""), task_id) && manager.value("killJobOnCompletion", true)) {
        return terminate_job(account, job_id, "JMComplete");
    }
    const std::string action = job_action_after(task, job->body);
    if (action == "terminate") return terminate_job(account, job_id, "TaskFailed");
    check_all_complete(account, job_id);
}

void PoolNodes::check_all_complete(const std::string& account, const std::string& job_id) {
    std::optional<StoredEntity> job = store_.get(account, kJobs, job_id);
    if (!job || job->body.value("state", "") != "active" || job->body.value("onAllTasksComplete", "") != "terminatejob") return;
    // A job without tasks is not "all complete": the service's advice is to add the job, then its
    // tasks; a choice where the service's rule is not on record.
    if (!store_.task_tally(account, job_id).all_completed()) return;
    terminate_job(account, job_id, "AllTasksComplete");
}

bool PoolNodes::job_has_running(const std::string& account, const std::string& job_id) const {
    const std::string prefix = job_prefix(account, job_id);
    auto it = running_.lower_bound(prefix);
    return it != running_.end() && it->first.rfind(prefix, 0) == 0;
}

void PoolNodes::unqueue(const std::string& account, const std::string& job_id, const std::string& task_id) {
    for (auto& [key, pool] : state_) {
        if (key.first != account) continue;
        std::erase_if(pool.queue, [&](const TaskRef& t) {
            return text::iequals(t.job_id, job_id) && (task_id.empty() || text::iequals(t.task_id, task_id));
        });
    }
}

void PoolNodes::stop_job_tasks(const std::string& account, const std::string& job_id, const std::string& reason) {
    unqueue(account, job_id, "");
    if (reason.empty()) return;
    const std::string prefix = job_prefix(account, job_id);
    for (auto& [key, run] : running_) {
        if (key.rfind(prefix, 0) == 0) run.control->cancel(reason);
    }
}

void PoolNodes::terminate_job(const std::string& account, const std::string& job_id, const std::string& reason) {
    const std::string now = time::now_iso8601();
    std::optional<StoredEntity> job = store_.update(account, kJobs, job_id, [&](json& doc) {
        const std::string state = doc.value("state", "");
        if (state != "active" && state != "disabled") return false;
        doc["previousState"] = state;
        doc["previousStateTransitionTime"] = doc.value("stateTransitionTime", now);
        doc["state"] = "terminating";
        doc["stateTransitionTime"] = now;
        doc["executionInfo"]["terminateReason"] = reason;
        return true;
    });  // the document as it is now, written or not
    if (!job || job->body.value("state", "") != "terminating") return;
    log::info("batch job " + job_id + " terminates (" + job->body["executionInfo"].value("terminateReason", "") + ")");
    trace("batch job " + job_id, "terminates (" + job->body["executionInfo"].value("terminateReason", "") + ")");
    stop_job_tasks(account, job_id, "terminate");
    finish_job_if_idle(account, job_id);
}

void PoolNodes::finish_job_if_idle(const std::string& account, const std::string& job_id) {
    if (job_has_running(account, job_id)) return;
    const std::string now = time::now_iso8601();
    std::optional<StoredEntity> done = store_.update(account, kJobs, job_id, [&](json& doc) {
        if (doc.value("state", "") != "terminating") return false;
        complete_job(doc, doc["executionInfo"].value("terminateReason", "UserTerminate"), now);
        return true;
    });
    if (done && done->body.value("state", "") == "completed" && done->body.value("stateTransitionTime", "") == now) {
        trace("batch job " + job_id, "completes");
        release_job(account, done->body);
        release_auto_pool(account, done->body);
        schedule_job_ended(account, done->body);
    }
}

void PoolNodes::release_auto_pool(const std::string& account, const json& job) {
    if (!job_owns_pool(job)) return;
    delete_auto_pool(account, pool_of_job(job), "goes with its job " + job.value("id", ""));
}

void PoolNodes::delete_auto_pool(const std::string& account, const std::string& pool_id, const std::string& why) {
    store_.update(account, kPools, pool_id, [](json& doc) {
        if (doc.value("state", "") == "deleting") return false;
        doc["state"] = "deleting";
        doc["stateTransitionTime"] = time::now_iso8601();
        return true;
    });
    const Key key{account, text::lower(pool_id)};
    if (auto it = state_.find(key); it != state_.end()) it->second.deleting = true;
    trace("batch pool " + pool_id, why);
    reconcile(key);
}

void PoolNodes::job_terminating(const std::string& account, const std::string& job_id) {
    post([this, account, job_id] { terminate_job(account, job_id, ""); });
}

// The job's maxWallClockTime, counted from when it was added (on the nodes' clock, kept in the
// document as _addedTicks when it is added; written here for a job stored without it), read again
// when the timer fires.
void PoolNodes::arm_job_clock(const std::string& account, const std::string& job_id) {
    std::optional<StoredEntity> job = store_.update(account, kJobs, job_id, [&](json& doc) {
        if (doc.contains("_addedTicks")) return false;
        doc["_addedTicks"] = time::to_ticks(clock_.now());
        return true;
    });  // the document as it is now, written or not
    if (!job || !counts_wall_clock(*job)) return;
    std::optional<std::chrono::seconds> limit = limit_of(job->body.value("constraints", json::object()), "maxWallClockTime");
    if (!limit) return;
    const time::TimePoint deadline = time::from_ticks(job->body.value("_addedTicks", std::int64_t{0})) + *limit;
    at(deadline, [this, account, job_id, deadline] {
        std::optional<StoredEntity> now = store_.get(account, kJobs, job_id);
        if (!now || !counts_wall_clock(*now)) return;
        std::optional<std::chrono::seconds> limit = limit_of(now->body.value("constraints", json::object()), "maxWallClockTime");
        if (!limit) return;
        const time::TimePoint due = time::from_ticks(now->body.value("_addedTicks", std::int64_t{0})) + *limit;
        if (due > deadline) return arm_job_clock(account, job_id);  // lengthened since
        terminate_job(account, job_id, "MaxWallClockTimeExpiry");
    });
}

void PoolNodes::job_added(const std::string& account, const std::string& job_id) {
    post([this, account, job_id] { arm_job_clock(account, job_id); });
}

void PoolNodes::job_changed(const std::string& account, const std::string& job_id) {
    post([this, account, job_id] {
        arm_job_clock(account, job_id);
        check_all_complete(account, job_id);
    });
}

void PoolNodes::job_disabled(const std::string& account, const std::string& job_id, const std::string& option) {
    post([this, account, job_id, option] {
        stop_job_tasks(account, job_id, option == "wait" ? "" : option == "terminate" ? "terminate" : "requeue");
    });
}

void PoolNodes::job_enabled(const std::string& account, const std::string& job_id) {
    post([this, account, job_id] {
        std::optional<StoredEntity> job = store_.get(account, kJobs, job_id);
        if (job && job->body.value("state", "") == "active") queue_job_tasks(*job);
    });
}

void PoolNodes::job_deleting(const std::string& account, const std::string& job_id) {
    post([this, account, job_id] {
        stop_job_tasks(account, job_id, "job deleted");
        // The documents and the directories of tasks that ran go now; running tasks report to
        // task_done, which removes theirs.
        TaskTotals tasks;
        store_.for_each_in_scope(account, tasks_of(job_id), [&](StoredEntity& task) {
            if (!running_.count(run_key_of(account, job_id, task.body.value("id", "")))) remove_task_dirs(task.body);
            tasks.add(task.body);
        });
        std::optional<StoredEntity> job = store_.get(account, kJobs, job_id);
        // Its tasks stay in the account's lifetime statistics.
        update_usage(account, [&](json& record) { retire_tasks(record, tasks); });
        store_.remove_scope(account, tasks_of(job_id));
        store_.remove(account, kJobs, job_id);
        if (job) {
            release_job(account, job->body);
            release_auto_pool(account, job->body);
            schedule_job_ended(account, job->body);
        }
    });
}

void PoolNodes::terminate_task(const std::string& account, const std::string& job_id, const std::string& task_id) {
    ask<bool>([this, account, job_id, task_id] {
        auto run = running_.find(run_key_of(account, job_id, task_id));
        if (run != running_.end()) {
            run->second.control->cancel("terminate");  // task_done writes its end
            return true;
        }
        unqueue(account, job_id, task_id);
        std::optional<StoredEntity> written = store_.update(account, tasks_of(job_id), task_id, [&](json& doc) {
            if (doc.value("state", "") == "completed") return false;
            end_without_retry(doc, task_ended(), time::now_iso8601());
            return true;
        });
        if (written && written->body.value("state", "") == "completed") task_completed(account, job_id, written->body);
        return true;
    });
}

void PoolNodes::delete_task(const std::string& account, const std::string& job_id, const std::string& task_id) {
    ask<bool>([this, account, job_id, task_id] {
        auto run = running_.find(run_key_of(account, job_id, task_id));
        std::optional<StoredEntity> task = store_.get(account, tasks_of(job_id), task_id);
        if (run != running_.end()) {
            run->second.control->cancel("task deleted");  // task_done removes its directory
        } else if (task) {
            remove_task_dirs(task->body);
        }
        unqueue(account, job_id, task_id);
        store_.remove(account, tasks_of(job_id), task_id);
        check_all_complete(account, job_id);
        return true;
    });
}

}  // namespace bai::batch
