// The job schedules at work on the nodes' thread and clock (so that a scenario's virtual clock
// runs a week of a schedule in a moment): each makes its jobs when plan_schedule says, with their
// auto pools (one per job, or one for the schedule's life), completes when it makes no more and
// its last job has ended, and goes with its jobs when deleted.
#include "common/log/logger.h"
#include "common/text/ascii.h"
#include "common/time/timestamps.h"
#include "emulator/batch/pool_nodes.h"
#include "emulator/batch/pool_rules.h"
#include "emulator/batch/schedule_rules.h"
#include "emulator/batch/task_states.h"
#include "emulator/batch/work_rules.h"

namespace bai::batch {

using nlohmann::json;

namespace {

// The schedule's auto pool lives as long as the schedule (poolLifetimeOption jobschedule).
bool schedule_owns_pool(const json& schedule) {
    const json spec = schedule.value("jobSpecification", json::object()).value("poolInfo", json::object()).value("autoPoolSpecification", json());
    return spec.is_object() && text::iequals(spec.value("poolLifetimeOption", ""), "jobschedule");
}

bool job_is_active(const std::optional<StoredEntity>& job) {
    if (!job) return false;
    const std::string state = job->body.value("state", "");
    return state != "completed" && state != "deleting";
}

}  // namespace

// Answered once the schedule has been looked at: a schedule due now has its job when the request
// that added or enabled it is answered, as the service's recordings show.
void PoolNodes::schedule_changed(const std::string& account, const std::string& schedule_id) {
    ask<bool>([this, account, schedule_id] {
        consider_schedule(account, schedule_id);
        return true;
    });
}

void PoolNodes::schedule_terminating(const std::string& account, const std::string& schedule_id) {
    post([this, account, schedule_id] {
        std::optional<StoredEntity> schedule = store_.get(account, kJobSchedules, schedule_id);
        if (!schedule) return;
        const std::string recent = schedule->body.value("executionInfo", json::object()).value("recentJob", json::object()).value("id", "");
        if (!recent.empty()) terminate_job(account, recent, "UserTerminate");
        consider_schedule(account, schedule_id);  // completes it once that job has
    });
}

void PoolNodes::schedule_deleting(const std::string& account, const std::string& schedule_id) {
    post([this, account, schedule_id] { delete_schedule(account, schedule_id); });
}

void PoolNodes::delete_schedule(const std::string& account, const std::string& schedule_id) {
    std::optional<StoredEntity> schedule = store_.get(account, kJobSchedules, schedule_id);
    if (!schedule) return;
    for (const StoredEntity& job : store_.in_scope(account, kJobs)) {
        if (!text::iequals(job.body.value("_jobScheduleId", ""), schedule_id)) continue;
        const std::string job_id = job.body.value("id", "");
        store_.update(account, kJobs, job_id, mark_job_deleting);
        job_deleting(account, job_id);
    }
    // After its jobs' deletions (posted just before): the schedule goes once they have.
    post([this, account, schedule_id, body = schedule->body] {
        release_schedule_pool(account, body);
        store_.remove(account, kJobSchedules, schedule_id);
        schedule_wakes_.erase({account, text::lower(schedule_id)});
        trace("batch job schedule " + schedule_id, "deleted");
    });
}

void PoolNodes::release_schedule_pool(const std::string& account, const json& schedule) {
    const std::string pool_id = schedule.value("_autoPoolId", "");
    if (pool_id.empty() || !schedule_owns_pool(schedule)) return;
    const json spec = schedule["jobSpecification"]["poolInfo"]["autoPoolSpecification"];
    if (spec.value("keepAlive", false)) return;
    delete_auto_pool(account, pool_id, "goes with its job schedule " + schedule.value("id", ""));
}

void PoolNodes::schedule_job_ended(const std::string& account, const json& job) {
    const std::string schedule_id = job.value("_jobScheduleId", "");
    if (!schedule_id.empty()) consider_schedule(account, schedule_id);
}

void PoolNodes::consider_schedule(const std::string& account, const std::string& schedule_id) {
    const time::TimePoint now = clock_.now();
    std::optional<StoredEntity> stored = store_.update(account, kJobSchedules, schedule_id, [&](json& doc) { return place_schedule(doc, now); });
    if (!stored) return;
    const json& doc = stored->body;
    const std::string state = doc.value("state", "");
    const std::string recent = doc.value("executionInfo", json::object()).value("recentJob", json::object()).value("id", "");
    const bool active = !recent.empty() && job_is_active(store_.get(account, kJobs, recent));
    if (state == "completed" || state == "deleting" || state == "disabled") return;
    if (state == "terminating") {
        if (!active) complete_schedule(account, schedule_id);
        return;
    }
    const SchedulePlan plan = plan_schedule(doc, now, active);
    if (plan.complete) return complete_schedule(account, schedule_id);
    std::string made;
    if (plan.make_job) made = make_schedule_job(account, doc);
    store_.update(account, kJobSchedules, schedule_id, [&](json& d) {
        advance_schedule(d, now, plan.make_job);
        if (plan.next_run) {
            d["executionInfo"]["nextRunTime"] = time::format_iso8601(*plan.next_run);
        } else {
            d["executionInfo"].erase("nextRunTime");
        }
        if (!made.empty()) {
            d["executionInfo"]["recentJob"] = {{"id", made}};
            d["_jobCount"] = d.value("_jobCount", 0) + 1;
            if (schedule_owns_pool(d) && !d.contains("_autoPoolId")) {
                d["_autoPoolId"] = pool_of_job(store_.get(account, kJobs, made)->body);
            }
        }
        return true;
    });
    if (!plan.wake_at) return;
    // One timer per schedule and instant: the schedule is looked at again then, whatever changed.
    const Key key{account, text::lower(schedule_id)};
    const time::TimePoint when = *plan.wake_at;
    auto [it, inserted] = schedule_wakes_.insert({key, when});
    if (!inserted) {
        if (it->second <= when && it->second > now) return;
        it->second = when;
    }
    at(when, [this, account, schedule_id, key, when] {
        auto wake = schedule_wakes_.find(key);
        if (wake == schedule_wakes_.end() || wake->second != when) return;  // superseded
        schedule_wakes_.erase(wake);
        consider_schedule(account, schedule_id);
    });
}

std::string PoolNodes::make_schedule_job(const std::string& account, const json& schedule) {
    const std::string now = time::now_iso8601();
    json job;
    // Ids already taken (by a job of an earlier run of a schedule of this id) are passed over.
    for (int number = schedule.value("_jobCount", 0) + 1;; ++number) {
        job = new_job_document(schedule_job_body(schedule, number), now);
        if (!store_.get(account, kJobs, job["id"])) break;
    }
    job["_jobScheduleId"] = schedule.value("id", "");
    job["_addedTicks"] = time::to_ticks(clock_.now());  // before it is stored (arm_job_clock)
    const json spec = job["poolInfo"].value("autoPoolSpecification", json());
    std::optional<json> pool;
    if (spec.is_object()) {
        const std::string kept = schedule.value("_autoPoolId", "");
        if (schedule_owns_pool(schedule) && !kept.empty() && store_.get(account, kPools, kept)) {
            job["executionInfo"]["poolId"] = kept;
        } else {
            json body = spec["pool"];
            body["id"] = job["executionInfo"]["poolId"];
            pool = new_pool_document(body, now);
        }
    }
    const std::string job_id = job["id"];
    store_.add(account, kJobs, job);
    if (pool) {
        store_.add(account, kPools, *pool);
        pool_changed(account, (*pool)["id"]);
    }
    arm_job_clock(account, job_id);
    if (json manager = job_manager_task_body(job); manager.is_object()) {  // its manager task starts with it
        store_.add(account, tasks_of(job_id), new_task_document(manager, job, now));
        task_added(account, pool_of_job(job), job_id, manager);
    }
    log::info("batch job schedule " + schedule.value("id", "") + " made job " + job_id);
    trace("batch job schedule " + schedule.value("id", ""), "makes job " + job_id);
    return job_id;
}

void PoolNodes::complete_schedule(const std::string& account, const std::string& schedule_id) {
    const std::string now = time::now_iso8601();
    std::optional<StoredEntity> done = store_.update(account, kJobSchedules, schedule_id, [&](json& doc) {
        if (doc.value("state", "") == "completed") return false;
        move_state(doc, "completed", now);
        doc["executionInfo"]["endTime"] = now;
        doc["executionInfo"].erase("nextRunTime");
        return true;
    });
    if (!done || done->body.value("stateTransitionTime", "") != now) return;
    trace("batch job schedule " + schedule_id, "completes");
    release_schedule_pool(account, done->body);
}

void PoolNodes::recover_schedules() {
    for (const StoredEntity& schedule : store_.all(kJobSchedules)) {
        const std::string id = schedule.body.value("id", "");
        if (schedule.body.value("state", "") == "deleting") {
            delete_schedule(schedule.account, id);
        } else {
            consider_schedule(schedule.account, id);
        }
    }
}

}  // namespace bai::batch
