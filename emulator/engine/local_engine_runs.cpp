// The job engine's runs: a job started on its nodes (its run on a thread of its own), stopped,
// and ended: its document written as the service wrote it, or the job requeued; wall-clock limits.
#include "emulator/engine/local_engine.h"

#include <algorithm>
#include <cstdio>

#include "common/log/logger.h"
#include "common/text/ascii.h"
#include "emulator/arm/job_execution.h"
#include "emulator/arm/preview_api.h"
#include "emulator/arm/resource_ids.h"
#include "emulator/arm/resource_store.h"
#include "emulator/arm/resource_view.h"
#include "emulator/engine/engine_time.h"
#include "emulator/validation/duration.h"

namespace bai::engine {

namespace fs = std::filesystem;
using nlohmann::json;

void LocalEngine::start_job(ClusterState& cluster, const QueuedJob& queued, std::vector<NodeSlot*> nodes) {
    // One instant for the document's transition and the run's start (a declared workload's
    // timeline counts from it), read before anyone can see the job running.
    const time::TimePoint started_at = clock_.now();
    const std::string now = arm::arm_time(started_at);
    bool started = false;
    std::optional<arm::StoredResource> job = store_.update(queued.id, [&](json& body) {
        json& p = body["properties"];
        if (p.value("executionState", "") != "queued") return false;
        p["executionState"] = "running";
        p["executionStateTransitionTime"] = now;
        p["executionInfo"] = {{"startTime", now}};
        started = true;
        return true;
    });
    if (!job || !started) return;  // deleted or ended (terminated) meanwhile
    const json& p = job->body["properties"];
    RunningJob run;
    run.id = queued.id;
    run.cluster_key = cluster.key;
    run.queued = queued;
    run.control = std::make_shared<RunControl>();
    run.max_wall_clock = p["constraints"].value("maxWallClockTime", "P7D");
    std::chrono::seconds limit = validation::parse_duration(run.max_wall_clock).value_or(std::chrono::hours(24 * 7));
    // The service's own cap (maxJobDurationSeconds, the 2018-05-01 API's jobs) when it is shorter.
    if (p.contains("maxJobDurationSeconds") && p["maxJobDurationSeconds"].is_number_integer() &&
        p["maxJobDurationSeconds"].get<long long>() >= 1) {
        limit = std::min(limit, std::chrono::seconds(p["maxJobDurationSeconds"].get<long long>()));
    }
    run.deadline = clock_.now() + limit;

    JobRunInputs in;
    in.job_id = queued.id;
    in.job_name = job->body.value("name", "job");
    in.properties = p;
    in.preview_layout = arm::uses_preview_output_layout(job->body);
    // Jobs of the 2018-05-01 API (the flat API's carry `_preview`) get the diagnosis archive.
    if (!job->body.contains("_preview")) in.diagnosis_pool = cluster.key;
    in.mpi_agent = mpi_agent_;
    in.node_ssh = node_ssh_;
    in.default_python = options_.default_python;
    in.cluster_volumes = arm::volumes_of(cluster.spec.mount_volumes);
    in.containers = &options_.containers;
    in.runtimes = &runtimes_;
    in.mounts = {&faults_, options_.share_passthrough, options_.bind_shares, options_.hosts != nullptr,
                 options_.hosts != nullptr && options_.remote_shares};
    in.workloads = options_.workloads;
    in.clock = &clock_;
    in.started = started_at;
    std::string segment = p.value("jobOutputDirectoryPathSegment", in.job_name);
    in.shared_dir = cluster.dir / "shared" / segment.substr(segment.rfind('/') + 1);
    for (NodeSlot* slot : nodes) {
        slot->node.state = NodeState::running;
        slot->node.job_key = queued.key;
        run.node_ids.push_back(slot->node.id);
        int slots = cluster.spec.vm_size.gpus > 0 ? cluster.spec.vm_size.gpus : cluster.spec.vm_size.cores;
        in.nodes.push_back({slot->node.id, slot->node.address, slot->node.root, slot->node.gpus, slots,
                            slot->node.hosts ? slot->node.gpu_devices : devices_of(slot->node.gpus),
                            slot->volumes->directories, slot->node.hosts});
    }
    {
        std::lock_guard guard(snapshot_mutex_);
        job_nodes_[queued.key] = run.node_ids;
    }
    // Where a stdouterr on the node's own disk lies, for the portal (no API reaches it).
    in.stdouterr_ready = [this, key = queued.key, anchors = std::vector<std::filesystem::path>{
                                                     in.nodes.empty() ? std::filesystem::path() : in.nodes[0].root,
                                                     in.shared_dir.parent_path()}](const std::filesystem::path& dir) {
        for (const std::filesystem::path& anchor : anchors) {
            if (anchor.empty()) continue;
            const std::filesystem::path relative = dir.lexically_normal().lexically_relative(anchor.lexically_normal());
            if (relative.empty() || *relative.begin() == "..") continue;
            std::lock_guard guard(snapshot_mutex_);
            job_logs_[key] = {anchor, relative.string()};
            return;
        }
    };
    log::info("job " + queued.id + " starts on " + std::to_string(nodes.size()) + " node(s) of cluster " + cluster.spec.name);
    {
        std::string on;
        for (const std::string& id : run.node_ids) {
            on += (on.empty() ? "" : ",") + id;
            note(cluster.key, id, queued.key, queued.id, "runs");
        }
        trace("job " + in.job_name, "runs on " + on);
        note(cluster.key, "", queued.key, queued.id, "runs", "on " + on);
    }
    std::shared_ptr<RunControl> control = run.control;
    std::string key = queued.key;
    run.thread = std::thread([this, in = std::move(in), control, key, turn = Participation(clock_)]() mutable {
        turn.begin();
        JobOutcome outcome;
        try {
            outcome = run_job(in, storage_, *control);
        } catch (const std::exception& e) {
            outcome = {JobOutcome::Result::failed, std::nullopt, "JobFailed", e.what()};
        }
        if (control->cancelled()) outcome.result = JobOutcome::Result::cancelled;
        post([this, key, outcome] { job_done(key, outcome); });
    });
    running_.emplace(queued.key, std::move(run));
}

std::vector<std::string> LocalEngine::devices_of(const std::vector<std::string>& uuids) const {
    std::vector<std::string> devices;
    for (const std::string& uuid : uuids) {
        for (const Gpu& gpu : options_.gpus) {
            if (gpu.uuid == uuid && gpu.minor >= 0) devices.push_back("/dev/nvidia" + std::to_string(gpu.minor));
        }
    }
    return devices;
}

void LocalEngine::stop_job(const std::string& key, const std::string& reason) {
    auto it = running_.find(key);
    if (it != running_.end()) it->second.control->cancel(reason);
}

void LocalEngine::job_done(const std::string& key, JobOutcome outcome) {
    auto it = running_.find(key);
    if (it == running_.end()) return;
    RunningJob job = std::move(it->second);
    running_.erase(it);
    job.thread.join();  // it has posted this and left the clock's turns
    std::string reason = job.control->reason();
    const std::string now = now_text(clock_);
    if (std::optional<arm::StoredResource> doc = store_.get(job.id);
        doc && doc->body["properties"].value("executionState", "") == "terminating") {
        reason = "terminate";  // a terminate asked while it was being requeued or stopped for another cause
    }
    {
        std::string ended = outcome.result == JobOutcome::Result::succeeded ? "succeeded"
                            : outcome.result == JobOutcome::Result::failed  ? "failed"
                            : reason == "requeue" || reason == "preempted" || reason == "node failed"
                                ? "requeued: " + reason
                            : reason == "killed" ? "failed: killed"
                                                 : "stopped: " + reason;
        if (outcome.exit_code) {
            ended += " (exit code " + std::to_string(*outcome.exit_code) + ")";
        } else if (reason == "killed" && outcome.result == JobOutcome::Result::cancelled) {
            ended += " (exit code 137)";
        }
        for (const std::string& id : job.node_ids) note(job.cluster_key, id, key, job.id, "ends", ended);
        note(job.cluster_key, "", key, job.id, "ends", ended);
    }

    auto cluster_it = clusters_.find(job.cluster_key);
    if (cluster_it != clusters_.end()) {
        ClusterState& cluster = cluster_it->second;
        for (const std::string& id : job.node_ids) {
            for (size_t i = 0; i < cluster.nodes.size(); ++i) {
                Node& node = cluster.nodes[i]->node;
                if (node.id != id) continue;
                node.job_key.clear();
                if (node.remove_after_job) {
                    remove_node(cluster, i, "its job is done");
                } else {
                    node.state = node.failed ? NodeState::unusable : NodeState::idle;
                }
                break;
            }
        }
        if (cluster.nodes.empty() && !store_.type_of(cluster.spec.id)) {
            forget_cluster(cluster_it);
        } else {
            write_cluster(cluster);
        }
    }

    if (outcome.result != JobOutcome::Result::cancelled) {
        bool ok = outcome.result == JobOutcome::Result::succeeded;
        store_.update(job.id, [&](json& body) {
            arm::end_execution(body, ok ? "succeeded" : "failed", outcome.exit_code,
                            ok ? json::array() : json::array({arm::execution_error(outcome.error_code, outcome.error_message)}), now);
            return true;
        });
        log::info("job " + job.id + (ok ? " succeeded" : " failed: " + outcome.error_message));
        return;
    }
    if (reason == "requeue" || reason == "preempted" || reason == "node failed") {
        auto requeued = store_.update(job.id, [&](json& body) {
            if (body["properties"].value("executionState", "") != "running") return false;
            arm::requeue_execution(body, now);
            return true;
        });
        if (requeued && requeued->body["properties"].value("executionState", "") == "queued") {
            std::vector<QueuedJob>& queue = queues_[job.cluster_key];
            queue.insert(std::upper_bound(queue.begin(), queue.end(), job.queued, runs_before), job.queued);
            log::info("job " + job.id + " requeued (" + reason + ")");
        }
        return;
    }
    if (reason == "killed") {
        store_.update(job.id, [&](json& body) {
            arm::end_execution(body, "failed", 137,
                               json::array({arm::execution_error("JobFailed", "Job failed with non-zero exit code")}), now);
            return true;
        });
        return;
    }
    json errors;
    if (reason == "terminate") {
        errors = json::array({arm::job_terminated_error()});
    } else if (reason == "wallclock") {
        errors = json::array({arm::execution_error("MaxWallClockTimeExceeded", "The job ran longer than its maxWallClockTime (" +
                                                                    job.max_wall_clock + ") and was stopped")});
    } else if (reason == "deallocated") {
        errors = json::array({arm::execution_error("NodeDeallocated",
                                    "The job was stopped because its node left the cluster (nodeDeallocationOption terminate)")});
    } else if (reason == "cluster deleted") {
        errors = json::array({arm::execution_error("ClusterDeleted", "The cluster of the job was deleted")});
    } else {
        // Deleted: no document to write; what its run told of its logs (after the delete erased
        // them, perhaps) goes too.
        std::lock_guard guard(snapshot_mutex_);
        job_logs_.erase(key);
        return;
    }
    store_.update(job.id, [&](json& body) {
        arm::end_execution(body, "failed", std::nullopt, errors, now);
        return true;
    });
    log::info("job " + job.id + " stopped: " + reason);
}

void LocalEngine::check_deadlines() {
    const time::TimePoint now = clock_.now();
    for (auto& [key, job] : running_) {
        if (now >= job.deadline && !job.control->cancelled()) job.control->cancel("wallclock");
    }
}

// ---- hooks (operation worker, inside its transaction: post only, or write the document) ----

}  // namespace bai::engine
