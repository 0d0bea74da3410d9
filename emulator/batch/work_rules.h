// What the Batch service checks in a job or a task to add, and the documents it keeps of them.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace bai::batch {

// Throws BatchError naming the property.
void check_job_to_add(const nlohmann::json& body);
nlohmann::json new_job_document(const nlohmann::json& body, const std::string& now);
// The task to add for a job's jobManagerTask (started with the job), or null when it has none.
nlohmann::json job_manager_task_body(const nlohmann::json& job);
// A job being deleted (by its delete or its schedule's): `deleting`, its previousState kept;
// false (nothing to write) when it is already.
bool mark_job_deleting(nlohmann::json& job);
// The id of the pool a job runs on: executionInfo.poolId (an auto pool's), else poolInfo.poolId.
std::string pool_of_job(const nlohmann::json& job);
// Whether the job's auto pool goes with it (poolLifetimeOption job, keepAlive false).
bool job_owns_pool(const nlohmann::json& job);

// A job's patch (`replace` false) or update (true: what the body leaves out goes back to its
// default) against the job as it is.
void check_job_change(const nlohmann::json& body, const nlohmann::json& job, bool replace);
void apply_job_change(nlohmann::json& job, const nlohmann::json& body, bool replace);
// A task's update: its constraints.
void check_task_change(const nlohmann::json& body);

// A task's (or start task's, `prefix` "startTask.") resourceFiles, outputFiles and
// environmentSettings: objects of strings where the service has strings, a filePath that stays in
// the working directory.
void check_task_lists(const nlohmann::json& task, const std::string& prefix);

void check_task_to_add(const nlohmann::json& body);
// `job` is the job's document: its constraints.maxTaskRetryCount is the task's default.
nlohmann::json new_task_document(const nlohmann::json& body, const nlohmann::json& job, const std::string& now);

}  // namespace bai::batch
