// Job preparation and release tasks on the nodes: a job's jobPreparationTask runs on a node
// before the first of the job's tasks does there (in workitems/JOB/job-1/jobpreparation, with
// its retries); with waitForSuccess (the default) the job's tasks wait for it there, and a node
// where it failed runs none of them. When the job completes or is deleted, its jobReleaseTask
// runs on every node that ran its preparation (workitems/JOB/job-1/jobrelease). What each did on
// each node is the job's jobpreparationandreleasetaskstatus. Both live with the node: a reimage or
// a new node prepares again.
#include "common/log/logger.h"
#include "common/text/ascii.h"
#include "common/time/timestamps.h"
#include "emulator/batch/node_certificates.h"
#include "emulator/batch/pool_nodes.h"
#include "emulator/batch/task_states.h"

namespace bai::batch {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const char* task_kind(bool release) { return release ? "jobrelease" : "jobpreparation"; }

// The relative directory of a job's preparation or release task on a node.
std::string task_root_of(const std::string& job_id, bool release) { return "workitems/" + job_id + "/job-1/" + task_kind(release); }

}  // namespace

bool PoolNodes::preparation_allows(Pool& pool, Node& node, const std::string& job_id, const json& pool_doc,
                                   std::map<std::string, std::optional<json>>& jobs) {
    auto cached = jobs.find(job_id);
    if (cached == jobs.end()) {
        std::optional<StoredEntity> job = store_.get(pool.account, kJobs, job_id);
        cached = jobs.emplace(job_id, job ? std::optional<json>(job->body) : std::nullopt).first;
    }
    if (!cached->second || !cached->second->contains("jobPreparationTask")) return true;
    const json& job = *cached->second;
    JobTasks& done = node.job_tasks[text::lower(job_id)];
    if (done.state.empty()) start_job_task(pool, node, job, pool_doc, false);
    if (!job["jobPreparationTask"].value("waitForSuccess", true)) return true;
    return done.state == "succeeded";
}

void PoolNodes::start_job_task(Pool& pool, Node& node, const json& job, const json& pool_doc, bool release) {
    const std::string job_id = job.value("id", "");
    json task = job.value(release ? "jobReleaseTask" : "jobPreparationTask", json::object());
    // The preparation task's retries are in its constraints (the release task has none).
    task["maxTaskRetryCount"] = release ? 0 : task.value("constraints", json::object()).value("maxTaskRetryCount", 0);
    const fs::path dir = node.root / task_root_of(job_id, release);
    std::error_code ec;
    fs::create_directories(dir / "wd", ec);
    install_certificates(store_, pool.account, pool_doc, dir / "certs", "task");
    engine::Environment env = node_environment(pool, node);
    env["AZ_BATCH_JOB_ID"] = job_id;
    env["AZ_BATCH_TASK_ID"] = task.value("id", task_kind(release));
    env["AZ_BATCH_TASK_DIR"] = node.image.view(node.root, dir);
    env["AZ_BATCH_TASK_WORKING_DIR"] = node.image.view(node.root, dir / "wd");
    env["AZ_BATCH_CERTIFICATES_DIR"] = node.image.view(node.root, dir / "certs");
    const fs::path prep = node.root / task_root_of(job_id, false);
    env["AZ_BATCH_JOB_PREP_DIR"] = node.image.view(node.root, prep);
    env["AZ_BATCH_JOB_PREP_WORKING_DIR"] = node.image.view(node.root, prep / "wd");
    packages_.install(pool.account, pool_doc.value("applicationPackageReferences", json::array()), node.root, env,
                      [&node](const fs::path& p) { return node.image.view(node.root, p); });
    add_settings(env, task);
    JobTasks& done = node.job_tasks[text::lower(job_id)];
    json& info = release ? done.release : done.prep;
    info = {{"state", "running"}, {"startTime", time::now_iso8601()}, {"retryCount", 0},
            {"taskRootDirectory", task_root_of(job_id, release)}};
    if (!release) done.state = "running";
    trace("batch pool " + pool.id, "node " + node.id + " runs the " + task_kind(release) + " task of " + job_id);
    const Key key{pool.account, text::lower(pool.id)};
    const std::uint64_t serial = ++next_serial_;
    auto control = std::make_shared<engine::RunControl>();
    side_runs_[serial] = {node.id, control};
    // Its maxWallClockTime: the release task's own (PT15M unless given), the preparation's
    // constraints'.
    if (std::optional<std::chrono::seconds> limit = limit_of(release ? task : task.value("constraints", json::object()), "maxWallClockTime")) {
        at(clock_.now() + *limit, [this, serial] {
            if (auto side = side_runs_.find(serial); side != side_runs_.end()) side->second.control->cancel("wallclock");
        });
    }
    side_threads_[serial] = std::thread([this, key, serial, node_id = node.id, job_id, release, task, env, dir, control,
                                         wrap = wrap_for(node), containers = containers_for(pool_doc, node),
                                         turn = engine::Participation(clock_)]() mutable {
        turn.begin();
        NodeTaskRun run;
        try {
            run = run_node_task(task, env, dir, *control, wrap, containers ? &*containers : nullptr);
            if (control->reason() == "wallclock" && run.info.value("state", "") == "completed") {
                run.info["failureInfo"] = wall_clock_expired();
                run.info["result"] = "failure";
                run.succeeded = false;
            }
        } catch (const std::exception& e) {  // nothing of a node's task may take the daemon down
            run.info = {{"state", "completed"}, {"retryCount", 0}, {"result", "failure"},
                        {"failureInfo", failure_info("TaskRunFailed", std::string("The emulator could not run the task: ") + e.what(),
                                                     "ServerError")}};
        }
        post([this, key, serial, node_id, job_id, release, info = run.info, ok = run.succeeded] {
            job_task_done(key, serial, node_id, job_id, release, info, ok);
        });
    });
}

void PoolNodes::job_task_done(const Key& key, std::uint64_t serial, const std::string& node_id, const std::string& job_id,
                              bool release, json info, bool succeeded) {
    if (auto thread = side_threads_.find(serial); thread != side_threads_.end()) {
        thread->second.join();  // it has posted this and left the clock's turns
        side_threads_.erase(thread);
    }
    side_runs_.erase(serial);
    Node* node = find_node(key, node_id);
    if (!node) return;
    auto done = node->job_tasks.find(text::lower(job_id));
    if (done == node->job_tasks.end()) return;
    info["taskRootDirectory"] = task_root_of(job_id, release);
    (release ? done->second.release : done->second.prep) = info;
    if (!release) done->second.state = succeeded ? "succeeded" : "failed";
    // Cut by the node's reboot: it did not complete, and runs again once the node is back.
    if (!release && (node->state == "rebooting" || node->state == "reimaging")) done->second.state.clear();
    log::info("batch job " + job_id + ": the " + task_kind(release) + " task on node " + node_id + " " +
              (succeeded ? "succeeded" : "failed"));
    trace("batch pool " + state_[key].id, "node " + node_id + ": the " + task_kind(release) + " task of " + job_id + " " +
                                              (succeeded ? "succeeded" : "failed"));
    if (release && !store_.get(key.first, kJobs, job_id)) node->job_tasks.erase(done);  // a deleted job's: nothing to show
    schedule(key);
}

void PoolNodes::release_job(const std::string& account, const json& job) {
    const std::string job_id = job.value("id", "");
    for (auto& [key, pool] : state_) {
        if (key.first != account) continue;
        std::optional<StoredEntity> pool_doc = store_.get(account, kPools, key.second);
        for (auto& node : pool.nodes) {
            auto done = node->job_tasks.find(text::lower(job_id));
            if (done == node->job_tasks.end() || !done->second.release.is_null()) continue;
            if (!job.contains("jobReleaseTask")) {
                if (!store_.get(account, kJobs, job_id)) node->job_tasks.erase(done);
                continue;
            }
            start_job_task(pool, *node, job, pool_doc ? pool_doc->body : json::object(), true);
        }
    }
}

json PoolNodes::job_task_status(const std::string& account, const std::string& job_id) {
    return ask<json>([this, account, job_id] {
        json out = json::array();
        for (const auto& [key, pool] : state_) {
            if (key.first != account) continue;
            for (const auto& node : pool.nodes) {
                auto done = node->job_tasks.find(text::lower(job_id));
                if (done == node->job_tasks.end()) continue;
                json status{{"poolId", pool.id}, {"nodeId", node->id}, {"nodeUrl", "pools/" + pool.id + "/nodes/" + node->id},
                            {"jobPreparationTaskExecutionInfo", done->second.prep}};
                if (!done->second.release.is_null()) status["jobReleaseTaskExecutionInfo"] = done->second.release;
                out.push_back(std::move(status));
            }
        }
        return out;
    });
}

}  // namespace bai::batch
