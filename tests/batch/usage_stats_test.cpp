// The account statistics computed from what ran (usage_stats.h).
#include <gtest/gtest.h>

#include "emulator/batch/usage_stats.h"

namespace bai::batch {
namespace {

using nlohmann::json;

time::TimePoint moment(const char* iso) { return *time::parse_iso8601(iso); }

json task(const char* result, const char* created, const char* started, const char* ended, int retries) {
    return {{"state", "completed"},
            {"creationTime", created},
            {"executionInfo", {{"result", result}, {"startTime", started}, {"endTime", ended}, {"retryCount", retries}}}};
}

TEST(UsageStats, JobStatisticsCountWhatRanAndWhatWasRetired) {
    json record = new_usage_record(moment("2030-01-01T00:00:00Z"));
    retire_tasks(record, TaskTotals::of({task("failure", "2030-01-01T00:00:00Z", "2030-01-01T00:00:10Z", "2030-01-01T00:01:10Z", 2)}));
    const std::vector<json> tasks{task("success", "2030-01-01T01:00:00Z", "2030-01-01T01:00:05Z", "2030-01-01T02:30:05.5Z", 0),
                                  json{{"state", "running"}, {"executionInfo", {{"retryCount", 1}}}}};
    json stats = job_statistics(TaskTotals::of(tasks), record, "u", moment("2030-01-02T00:00:00Z"));
    EXPECT_EQ(stats["numSucceededTasks"], "1");
    EXPECT_EQ(stats["numFailedTasks"], "1");
    EXPECT_EQ(stats["numTaskRetries"], "3");
    EXPECT_EQ(stats["wallClockTime"], "PT1H31M0.5S");  // 1 h 30 m 0.5 s and 1 m
    EXPECT_EQ(stats["waitTime"], "PT15S");
    EXPECT_EQ(stats["startTime"], "2030-01-01T00:00:00.0000000Z");
    EXPECT_EQ(job_statistics({}, new_usage_record(moment("2030-01-01T00:00:00Z")), "u", moment("2030-01-01T00:00:00Z"))["wallClockTime"], "PT0S");
}

TEST(UsageStats, PoolStatisticsAndMetricsCountCoreTime) {
    // Two STANDARD_D2 (2 cores) sessions, one low-priority node.
    const std::vector<NodeSession> sessions{
        {"p", "STANDARD_D2", true, moment("2030-01-01T00:15:00Z"), moment("2030-01-01T01:15:00Z")},
        {"p", "STANDARD_D2", false, moment("2030-01-01T00:00:00Z"), moment("2030-01-01T00:30:00Z")},
        {"q", "STANDARD_D2", true, moment("2030-01-03T00:00:00Z"), moment("2030-01-03T00:10:00Z")}};
    json stats = pool_statistics(sessions, new_usage_record(moment("2030-01-01T00:00:00Z")), "u", moment("2030-01-04T00:00:00Z"));
    EXPECT_EQ(stats["usageStats"]["dedicatedCoreTime"], "PT2H20M");  // (60 + 10) min x 2 cores
    json metrics = pool_usage_metrics(sessions, moment("2030-01-01T00:10:00Z"), moment("2030-01-01T01:00:00Z"));
    ASSERT_EQ(metrics.size(), 2u);  // p's two intervals from 00:00 (rounded down) to 01:00
    EXPECT_EQ(metrics[0]["startTime"], "2030-01-01T00:00:00.0000000Z");
    EXPECT_DOUBLE_EQ(metrics[0]["totalCoreHours"].get<double>(), 1.5);  // 15 min dedicated + 30 min low-priority, x 2
    EXPECT_DOUBLE_EQ(metrics[1]["totalCoreHours"].get<double>(), 1.0);
    const auto [from, to] = last_usage_interval(moment("2030-01-03T00:40:00Z"));
    EXPECT_EQ(from, moment("2030-01-03T00:00:00Z"));
    EXPECT_EQ(to, moment("2030-01-03T00:30:00Z"));
}

TEST(UsageStats, TheRecordKeepsTheLatestSessions) {
    json record = new_usage_record(moment("2030-01-01T00:00:00Z"));
    for (std::size_t i = 0; i < kMaxSessions + 5; ++i) {
        std::string pool = "p";  // (not "p" + ...: GCC 12 warns of a restrict overlap that is not there)
        pool += std::to_string(i);
        record_session(record, {pool, "small", true, moment("2030-01-01T00:00:00Z"), moment("2030-01-01T00:01:00Z")});
    }
    std::vector<NodeSession> kept = sessions_of(record);
    ASSERT_EQ(kept.size(), kMaxSessions);
    EXPECT_EQ(kept.front().pool_id, "p5");
    EXPECT_DOUBLE_EQ(record["droppedCoreSeconds"].get<double>(), 5 * 60.0);  // the 5 dropped: a minute of one core each
}

}  // namespace
}  // namespace bai::batch
