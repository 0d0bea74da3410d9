// How a Batch task's and job's documents change as they run and end, as the service reports it:
// requeued (requeueCount), ended with an exit code (retried while retryCount < maxTaskRetryCount),
// ended without a retry (terminated, past maxWallClockTime), the job action its exit conditions
// name, a job completed with its terminateReason, and a job's task counts.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace bai::batch {

nlohmann::json failure_info(const std::string& code, const std::string& message, const std::string& category = "UserError");
// A non-zero exit.
nlohmann::json failure_exit_code();
// Terminated by a request (the task's or its job's).
nlohmann::json task_ended();
// Stopped at its constraints.maxWallClockTime (a code of the emulator's choosing).
nlohmann::json wall_clock_expired();

// A task's, job's or job schedule's state change: previousState and its time kept.
void move_state(nlohmann::json& doc, const std::string& state, const std::string& now);

// Back in the queue because its node went: requeueCount counts it, retryCount does not.
void requeue_document(nlohmann::json& doc, const std::string& now);
// Its process ended with `exit_code` (-1: none) and `failure` (null: none): completed with success,
// active again for a retry (true), or completed with failure once its retries are spent.
bool end_run(nlohmann::json& doc, int exit_code, const nlohmann::json& failure, const std::string& now);
// Completed with failure and `failure`, whatever its retries (terminated, out of wall-clock time).
void end_without_retry(nlohmann::json& doc, const nlohmann::json& failure, const std::string& now);

// What a completed task does to its job (exitConditions' jobAction: "none", "disable" or
// "terminate") when the job's onTaskFailure is performexitoptionsjobaction; "none" otherwise.
std::string job_action_after(const nlohmann::json& task, const nlohmann::json& job);

// Whether a completed task lets the tasks that depend on it run: a success unless its
// exitConditions say dependencyAction block, a failure only when they say satisfy.
bool satisfies_dependents(const nlohmann::json& task);
// The ids of the tasks a task depends on (dependsOn.taskIds, then each id of taskIdRanges).
std::vector<std::string> dependency_ids(const nlohmann::json& task);

// The job terminated (terminateReason: UserTerminate, AllTasksComplete, TaskFailed,
// MaxWallClockTimeExpiry or the user's text): completed, with its executionInfo's endTime.
void complete_job(nlohmann::json& doc, const std::string& reason, const std::string& now);

// GET /jobs/JOB/taskcounts: {"taskCounts": {active, running, completed, succeeded, failed},
// "taskSlotCounts": the same weighted by requiredSlots}.
nlohmann::json count_tasks(const std::vector<nlohmann::json>& tasks);

// A duration constraint (maxWallClockTime, retentionTime) as a limit; nullopt when absent or
// beyond a century (the service's "unlimited" is P10675199DT2H48M5.4775807S).
std::optional<std::chrono::seconds> limit_of(const nlohmann::json& constraints, const char* name);

}  // namespace bai::batch
