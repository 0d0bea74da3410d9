// When a Batch job schedule makes its jobs (plan_schedule, advance_schedule) and what it refuses.
#include <gtest/gtest.h>

#include "emulator/batch/batch_error.h"
#include "emulator/batch/schedule_rules.h"

namespace bai::batch {
namespace {

using nlohmann::json;
using std::chrono::hours;
using std::chrono::minutes;

time::TimePoint at(const char* iso) { return *time::parse_iso8601(iso); }

json schedule_of(const json& schedule) {
    json body{{"id", "s"}, {"schedule", schedule}, {"jobSpecification", {{"poolInfo", {{"poolId", "p"}}}}}};
    check_schedule_to_add(body);
    json doc = new_schedule_document(body, "2030-01-01T00:00:00Z");
    place_schedule(doc, at("2030-01-01T00:00:00Z"));
    return doc;
}

TEST(JobSchedule, WithoutRecurrenceMakesOneJobAndCompletesWhenItEnds) {
    json doc = schedule_of(json::object());
    SchedulePlan plan = plan_schedule(doc, at("2030-01-01T00:00:00Z"), false);
    EXPECT_TRUE(plan.make_job);
    EXPECT_FALSE(plan.next_run);
    advance_schedule(doc, at("2030-01-01T00:00:00Z"), true);
    EXPECT_FALSE(plan_schedule(doc, at("2030-01-01T05:00:00Z"), true).complete);  // its job runs on
    EXPECT_TRUE(plan_schedule(doc, at("2030-01-01T05:00:00Z"), false).complete);
}

TEST(JobSchedule, RecursFromDoNotRunUntil) {
    json doc = schedule_of({{"doNotRunUntil", "2030-01-02T02:00:00Z"}, {"recurrenceInterval", "PT6H"}});
    SchedulePlan early = plan_schedule(doc, at("2030-01-01T00:00:00Z"), false);
    EXPECT_FALSE(early.make_job);
    EXPECT_EQ(early.wake_at, at("2030-01-02T02:00:00Z"));
    SchedulePlan due = plan_schedule(doc, at("2030-01-02T02:00:00Z"), false);
    EXPECT_TRUE(due.make_job);
    EXPECT_EQ(due.next_run, at("2030-01-02T08:00:00Z"));
    advance_schedule(doc, at("2030-01-02T02:00:00Z"), true);
    EXPECT_EQ(plan_schedule(doc, at("2030-01-02T03:00:00Z"), false).next_run, at("2030-01-02T08:00:00Z"));
}

TEST(JobSchedule, AnOpportunityPastItsStartWindowIsLost) {
    json doc = schedule_of({{"recurrenceInterval", "PT6H"}, {"startWindow", "PT1H"}});
    advance_schedule(doc, at("2030-01-01T00:00:00Z"), true);  // the job of 00:00
    // 06:00 comes while that job runs: the next job waits for it until 07:00, then the chance is gone.
    SchedulePlan waiting = plan_schedule(doc, at("2030-01-01T06:30:00Z"), true);
    EXPECT_FALSE(waiting.make_job);
    EXPECT_EQ(waiting.next_run, at("2030-01-01T06:00:00Z"));
    EXPECT_GT(*waiting.wake_at, at("2030-01-01T07:00:00Z"));
    EXPECT_TRUE(plan_schedule(doc, at("2030-01-01T06:50:00Z"), false).make_job);
    SchedulePlan lapsed = plan_schedule(doc, at("2030-01-01T07:30:00Z"), false);
    EXPECT_FALSE(lapsed.make_job);
    EXPECT_EQ(lapsed.next_run, at("2030-01-01T12:00:00Z"));
}

TEST(JobSchedule, WithoutAWindowMissedOpportunitiesMakeOneJob) {
    json doc = schedule_of({{"recurrenceInterval", "PT1H"}});
    advance_schedule(doc, at("2030-01-01T00:00:00Z"), true);
    SchedulePlan late = plan_schedule(doc, at("2030-01-01T05:30:00Z"), false);
    EXPECT_TRUE(late.make_job);
    EXPECT_EQ(late.next_run, at("2030-01-01T06:00:00Z"));
}

TEST(JobSchedule, NothingAfterDoNotRunAfter) {
    json doc = schedule_of({{"recurrenceInterval", "P1D"}, {"doNotRunAfter", "2030-01-02T12:00:00Z"}});
    advance_schedule(doc, at("2030-01-01T00:00:00Z"), true);
    SchedulePlan second = plan_schedule(doc, at("2030-01-02T00:00:00Z"), false);
    EXPECT_TRUE(second.make_job);
    EXPECT_FALSE(second.next_run);  // 3 January is past doNotRunAfter
    advance_schedule(doc, at("2030-01-02T00:00:00Z"), true);
    EXPECT_TRUE(plan_schedule(doc, at("2030-01-03T00:00:00Z"), false).complete);
}

TEST(JobSchedule, AChangedScheduleRecursFromItsLastJob) {
    json doc = schedule_of({{"recurrenceInterval", "P1D"}});
    advance_schedule(doc, at("2030-01-01T00:00:00Z"), true);
    apply_schedule_change(doc, {{"schedule", {{"recurrenceInterval", "PT5H"}}}}, false);
    place_schedule(doc, at("2030-01-01T01:00:00Z"));
    EXPECT_EQ(plan_schedule(doc, at("2030-01-01T01:00:00Z"), false).next_run, at("2030-01-01T05:00:00Z"));
}

TEST(JobSchedule, RefusalsNameTheProperty) {
    auto property_of = [](const json& body) {
        try {
            check_schedule_to_add(body);
        } catch (const BatchError& e) {
            for (const auto& [key, value] : e.values) {
                if (key == "PropertyName") return value;
            }
            return std::string("(none)");
        }
        return std::string("(accepted)");
    };
    const json spec{{"poolInfo", {{"poolId", "p"}}}};
    EXPECT_EQ(property_of({{"id", "s"}, {"jobSpecification", spec}}), "schedule");
    EXPECT_EQ(property_of({{"id", "s"}, {"schedule", json::object()}}), "jobSpecification");
    EXPECT_EQ(property_of({{"id", "s"}, {"schedule", {{"recurrenceInterval", "PT30S"}}}, {"jobSpecification", spec}}),
              "schedule.recurrenceInterval");
    EXPECT_EQ(property_of({{"id", "s"}, {"schedule", {{"startWindow", "soon"}}}, {"jobSpecification", spec}}), "schedule.startWindow");
    EXPECT_EQ(property_of({{"id", "s"}, {"schedule", {{"doNotRunUntil", "tomorrow"}}}, {"jobSpecification", spec}}),
              "schedule.doNotRunUntil");
    EXPECT_EQ(property_of({{"id", "s"}, {"schedule", json::object()}, {"jobSpecification", {{"priority", 5}}}}),
              "jobSpecification.poolInfo");
    EXPECT_EQ(property_of({{"id", "a:b"}, {"schedule", json::object()}, {"jobSpecification", spec}}), "id");
    EXPECT_EQ(property_of({{"id", "s"}, {"schedule", json::object()}, {"jobSpecification", spec}}), "(accepted)");
}

}  // namespace
}  // namespace bai::batch
