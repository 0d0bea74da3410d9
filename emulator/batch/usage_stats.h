// An account's usage as the Batch service reports it, computed from what ran: the lifetime
// statistics of its jobs (tasks succeeded, failed, retried, their wall-clock and wait times) and
// of its pools (dedicated core time), and its pools' usage metrics (core hours per pool and
// 30-minute aggregation interval). What the emulator does not measure (CPU times, I/O, memory,
// disk, network) is 0. The account's record (the entity "usage" of the scope "usage") keeps
// when its statistics start, the node sessions that ended (the last kMaxSessions, the dedicated
// core time of older ones as a sum: usage metrics reach back as far as the sessions kept) and the
// totals of the tasks of deleted jobs.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/time/timestamps.h"
#include "emulator/batch/entity_store.h"

namespace bai::batch {

inline constexpr std::size_t kMaxSessions = 2000;
inline constexpr std::chrono::minutes kUsageInterval{30};

// A node's time in a pool: from when it joined to when it left (now, for a node still there).
struct NodeSession {
    std::string pool_id;
    std::string vm_size;
    bool dedicated = true;
    time::TimePoint start;
    time::TimePoint end;
};

// A new account record, its statistics starting at `now`.
nlohmann::json new_usage_record(time::TimePoint now);
// Adds an ended session (the oldest go past kMaxSessions).
void record_session(nlohmann::json& record, const NodeSession& session);
std::vector<NodeSession> sessions_of(const nlohmann::json& record);
// What the statistics count of tasks: the completed by result, every retry, and the completed
// tasks' run and wait times. Added to a task document at a time (a job's tasks are read a page
// at a time: a job may have 100,000).
struct TaskTotals {
    long long succeeded = 0;
    long long failed = 0;
    long long retries = 0;
    double wall_seconds = 0;
    double wait_seconds = 0;
    void add(const nlohmann::json& task);
    static TaskTotals of(const std::vector<nlohmann::json>& tasks);
};

// Folds the totals of the tasks of a job being deleted into the record's.
void retire_tasks(nlohmann::json& record, const TaskTotals& tasks);

// JobStatistics over the totals of tasks and the record's retired totals, at `url`.
nlohmann::json job_statistics(const TaskTotals& tasks, const nlohmann::json& record, const std::string& url, time::TimePoint now);
// PoolStatistics over the sessions (ended and live), at `url`.
nlohmann::json pool_statistics(const std::vector<NodeSession>& sessions, const nlohmann::json& record, const std::string& url,
                               time::TimePoint now);
// PoolUsageMetrics of each pool and aggregation interval from `from` to `to` (whole intervals:
// `from` rounded down, `to` up) where its nodes used core time, by pool then interval.
nlohmann::json pool_usage_metrics(const std::vector<NodeSession>& sessions, time::TimePoint from, time::TimePoint to);
// The last whole aggregation interval before `now`: what the service reports without starttime.
std::pair<time::TimePoint, time::TimePoint> last_usage_interval(time::TimePoint now);

}  // namespace bai::batch
