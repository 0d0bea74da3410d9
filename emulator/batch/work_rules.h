// What the Batch service checks in a job or a task to add, and the documents it keeps of them.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace bai::batch {

// Throws BatchError naming the property.
void check_job_to_add(const nlohmann::json& body);
nlohmann::json new_job_document(const nlohmann::json& body, const std::string& now);

void check_task_to_add(const nlohmann::json& body);
// `job` is the job's document: its constraints.maxTaskRetryCount is the task's default.
nlohmann::json new_task_document(const nlohmann::json& body, const nlohmann::json& job, const std::string& now);

}  // namespace bai::batch
