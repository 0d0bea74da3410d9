#include "emulator/batch/schedule_rules.h"

#include <algorithm>
#include <chrono>

#include "emulator/batch/batch_error.h"
#include "emulator/batch/pool_rules.h"
#include "emulator/batch/work_rules.h"
#include "emulator/validation/duration.h"

namespace bai::batch {

using nlohmann::json;

namespace {

constexpr std::chrono::seconds kShortestInterval{60};  // recurrenceInterval and startWindow

BatchError invalid_body() { return BatchError(400, "InvalidRequestBody", "The specified Request Body is not syntactically valid."); }

// The job specification's errors name their property under jobSpecification, as the service's do.
void check_job_specification(const json& spec) {
    if (!spec.is_object()) throw invalid_property("jobSpecification", spec.dump(), "The value must be an object");
    json job = spec;
    job["id"] = "schedule";  // the checks of a job to add want one; each job's own is made
    check_under("jobSpecification.", [&] { check_job_to_add(job); });
}

std::optional<std::chrono::seconds> duration_at(const json& schedule, const char* name) {
    if (!schedule.contains(name) || schedule[name].is_null()) return std::nullopt;
    const json& v = schedule[name];
    std::optional<std::chrono::seconds> d = v.is_string() ? validation::parse_duration(v.get<std::string>()) : std::nullopt;
    if (!d) throw invalid_property(std::string("schedule.") + name, v.dump(), "The value is an ISO 8601 duration such as PT1H30M");
    if (*d < kShortestInterval) throw invalid_property(std::string("schedule.") + name, v.dump(), "The value must be at least 1 minute");
    return d;
}

std::optional<time::TimePoint> time_at(const json& schedule, const char* name) {
    return time_property(schedule, name, std::string("schedule.") + name);
}

void check_schedule(const json& body) {
    if (!body.contains("schedule")) throw missing_property("schedule");
    const json& schedule = body["schedule"];
    if (!schedule.is_object()) throw invalid_property("schedule", schedule.dump(), "The value must be an object");
    for (const auto& [name, value] : schedule.items()) {
        if (name != "doNotRunUntil" && name != "doNotRunAfter" && name != "startWindow" && name != "recurrenceInterval") {
            throw invalid_property("schedule." + name, value.dump(), "The schedule has no such property");
        }
    }
    duration_at(schedule, "startWindow");
    duration_at(schedule, "recurrenceInterval");
    const std::optional<time::TimePoint> until = time_at(schedule, "doNotRunUntil");
    const std::optional<time::TimePoint> after = time_at(schedule, "doNotRunAfter");
    if (until && after && *after < *until) {
        throw invalid_property("schedule.doNotRunAfter", schedule["doNotRunAfter"].dump(), "The value must not be before doNotRunUntil");
    }
}

void check_metadata(const json& body) {
    if (!body.contains("metadata")) return;
    const json& metadata = body["metadata"];
    if (!metadata.is_array()) throw invalid_property("metadata", metadata.dump(), "The value must be a list of name-value pairs");
    for (const json& item : metadata) {
        if (!item.is_object() || !item.contains("name") || !item["name"].is_string()) throw missing_property("metadata.name");
    }
}

// The specification with the service's defaults, as the schedule shows it: the job a new job's
// document would be, less what belongs to one job.
json job_specification(const json& spec) {
    json job = spec;
    job["id"] = "schedule";
    json out = new_job_document(job, "");
    for (const char* own : {"id", "creationTime", "state", "stateTransitionTime", "executionInfo"}) out.erase(own);
    return out;
}

// The first opportunity of a schedule set at `now` after `last_slot` (the time of the last job
// it made, if any): none when it does not recur and has made its job.
json first_slot(const json& schedule, time::TimePoint now, std::optional<time::TimePoint> last_slot) {
    const std::optional<time::TimePoint> until = time_at(schedule, "doNotRunUntil");
    const std::optional<std::chrono::seconds> interval = duration_at(schedule, "recurrenceInterval");
    time::TimePoint slot = now;
    if (last_slot) {
        if (!interval) return nullptr;
        slot = *last_slot + *interval;
    }
    if (until) slot = std::max(slot, *until);
    return time::to_ticks(slot);
}

// The schedule's next opportunity at `now`, past the lapsed ones: those whose startWindow ended,
// and (without a window, or one at least as long as the interval) every earlier one but the
// last that is due.
std::optional<time::TimePoint> current_slot(const json& doc, time::TimePoint now) {
    if (!doc.contains("_slotTicks") || !doc["_slotTicks"].is_number_integer()) return std::nullopt;
    time::TimePoint slot = time::from_ticks(doc["_slotTicks"].get<std::int64_t>());
    const json& schedule = doc["schedule"];
    const std::optional<std::chrono::seconds> interval = duration_at(schedule, "recurrenceInterval");
    std::optional<std::chrono::seconds> window = duration_at(schedule, "startWindow");
    if (window && interval && *window >= *interval) window.reset();
    if (window && now > slot + *window) {
        if (!interval) return std::nullopt;
        const auto missed = (now - slot - *window) / *interval + 1;  // whole intervals lapsed
        slot += *interval * missed;
    }
    if (!window && interval && now >= slot + *interval) slot += *interval * ((now - slot) / *interval);
    return slot;
}

}  // namespace

void check_schedule_to_add(const json& body) {
    if (!body.is_object()) throw invalid_body();
    if (!body.contains("id")) throw missing_property("id");
    if (!body["id"].is_string() || !is_valid_pool_id(body["id"].get<std::string>())) {
        throw invalid_property("id", body["id"].dump(), "A job schedule id has 1 to 64 letters, digits, hyphens and underscores");
    }
    if (body.contains("displayName") && (!body["displayName"].is_string() || body["displayName"].get<std::string>().size() > 1024)) {
        throw invalid_property("displayName", body["displayName"].dump(), "The display name is a string of at most 1024 characters");
    }
    check_schedule(body);
    if (!body.contains("jobSpecification")) throw missing_property("jobSpecification");
    check_job_specification(body["jobSpecification"]);
    check_metadata(body);
}

json new_schedule_document(const json& body, const std::string& now) {
    json doc = body;
    doc["creationTime"] = now;
    doc["state"] = "active";
    doc["stateTransitionTime"] = now;
    doc["jobSpecification"] = job_specification(body["jobSpecification"]);
    doc["executionInfo"] = json::object();
    doc["_jobCount"] = 0;
    return doc;
}

void check_schedule_change(const json& body, bool replace) {
    if (!body.is_object()) throw invalid_body();
    for (const auto& [name, value] : body.items()) {
        if (name != "schedule" && name != "jobSpecification" && name != "metadata") {
            throw invalid_property(name, value.dump(), "This property cannot be changed");
        }
    }
    if (replace || body.contains("schedule")) check_schedule(body);
    if (replace && !body.contains("jobSpecification")) throw missing_property("jobSpecification");
    if (body.contains("jobSpecification")) check_job_specification(body["jobSpecification"]);
    check_metadata(body);
}

void apply_schedule_change(json& doc, const json& body, bool replace) {
    if (replace) doc.erase("metadata");
    if (body.contains("metadata")) doc["metadata"] = body["metadata"];
    if (body.contains("jobSpecification")) doc["jobSpecification"] = job_specification(body["jobSpecification"]);
    if (body.contains("schedule")) {
        doc["schedule"] = body["schedule"];
        doc.erase("_slotTicks");  // placed again by place_schedule, on the nodes' clock
    }
}

bool place_schedule(json& doc, time::TimePoint now) {
    if (doc.contains("_slotTicks")) return false;
    std::optional<time::TimePoint> last;
    if (doc.contains("_lastSlotTicks")) last = time::from_ticks(doc["_lastSlotTicks"].get<std::int64_t>());
    doc["_slotTicks"] = first_slot(doc["schedule"], now, last);
    return true;
}

json schedule_job_body(const json& schedule, int number) {
    json job = schedule["jobSpecification"];
    job["id"] = schedule.value("id", "") + ":job-" + std::to_string(number);
    return job;
}

SchedulePlan plan_schedule(const json& doc, time::TimePoint now, bool job_active) {
    SchedulePlan plan;
    std::optional<time::TimePoint> slot = current_slot(doc, now);
    const std::optional<time::TimePoint> after = time_at(doc["schedule"], "doNotRunAfter");
    if (slot && after && *slot > *after) slot.reset();
    if (!slot) {
        plan.complete = !job_active;
        return plan;
    }
    if (*slot > now) {
        plan.wake_at = plan.next_run = slot;
        return plan;
    }
    if (job_active) {
        // Due, but its last job runs on: it is made when that job ends (which looks again), or
        // lost when its window ends first.
        plan.next_run = slot;
        std::optional<std::chrono::seconds> window = duration_at(doc["schedule"], "startWindow");
        if (window) plan.wake_at = *slot + *window + std::chrono::seconds(1);
        return plan;
    }
    plan.make_job = true;
    const std::optional<std::chrono::seconds> interval = duration_at(doc["schedule"], "recurrenceInterval");
    if (interval && (!after || *slot + *interval <= *after)) plan.wake_at = plan.next_run = *slot + *interval;
    return plan;
}

void advance_schedule(json& doc, time::TimePoint now, bool made_job) {
    std::optional<time::TimePoint> slot = current_slot(doc, now);
    if (!slot) {
        doc["_slotTicks"] = nullptr;
        return;
    }
    if (!made_job) {
        doc["_slotTicks"] = time::to_ticks(*slot);
        return;
    }
    doc["_lastSlotTicks"] = time::to_ticks(*slot);
    const std::optional<std::chrono::seconds> interval = duration_at(doc["schedule"], "recurrenceInterval");
    doc["_slotTicks"] = interval ? json(time::to_ticks(*slot + *interval)) : json(nullptr);
}

}  // namespace bai::batch
