// What the Batch service checks in a job schedule to add, patch or update, the document it keeps
// of one, and when a schedule makes its next job (plan_schedule). A schedule makes jobs from its
// jobSpecification at recurrenceInterval steps from doNotRunUntil (or from its creation), one
// active job at a time; an opportunity not taken within startWindow of its time is lost; none is
// taken after doNotRunAfter; without a recurrence it makes one job and completes when that job
// ends.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/time/timestamps.h"

namespace bai::batch {

// Throws BatchError naming the property (jobSpecification.poolInfo, schedule.recurrenceInterval).
void check_schedule_to_add(const nlohmann::json& body);
nlohmann::json new_schedule_document(const nlohmann::json& body, const std::string& now);
// A patch (`replace` false: what the body names, schedule and jobSpecification replaced whole)
// or an update (true: schedule and jobSpecification required, metadata back to none when left
// out). Only the jobs made after it see the change.
void check_schedule_change(const nlohmann::json& body, bool replace);
void apply_schedule_change(nlohmann::json& schedule, const nlohmann::json& body, bool replace);

// The body of the schedule's job number `number` (id SCHEDULE:job-NUMBER, as the service names
// them), to be checked and stored as an added job is.
nlohmann::json schedule_job_body(const nlohmann::json& schedule, int number);

// Places a new or changed schedule's first opportunity ("_slotTicks") at `now` on the clock the
// schedules run by: at doNotRunUntil, or now, or one recurrence after the last job it made. False
// when it was placed already.
bool place_schedule(nlohmann::json& doc, time::TimePoint now);

// What a schedule does at `now`, given whether a job it made is still active.
struct SchedulePlan {
    bool make_job = false;  // now
    // When it should look again (its next opportunity, or doNotRunAfter); none when it makes no
    // more jobs.
    std::optional<time::TimePoint> wake_at;
    // Its next opportunity as executionInfo.nextRunTime shows it (none when there is none).
    std::optional<time::TimePoint> next_run;
    // It makes no more jobs and none is active: it completes.
    bool complete = false;
};
// `schedule` is the stored document: its "_slotTicks" (the time of its next opportunity, placed
// by place_schedule and kept by advance_schedule) and its schedule settings.
SchedulePlan plan_schedule(const nlohmann::json& schedule, time::TimePoint now, bool job_active);
// After plan_schedule: moves the document's next opportunity past the lapsed ones and, when a job
// was made now, past the one it took.
void advance_schedule(nlohmann::json& schedule, time::TimePoint now, bool made_job);

}  // namespace bai::batch
