// The execution fields of a job's document (executionState, its transition time, executionInfo)
// as an engine moves the job through its states; shared by every ComputeEngine.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace bai::arm {

// {"code", "message"}: one entry of executionInfo.errors or of a cluster's errors.
nlohmann::json execution_error(const std::string& code, const std::string& message);
// The error of a job ended by a terminate: JobTerminated, as the service wrote it.
nlohmann::json job_terminated_error();

// The end of a run: `state` (succeeded, failed), endTime (startTime too when it never started),
// exitCode when there is one (removed otherwise), errors when there are any.
void end_execution(nlohmann::json& job, const std::string& state, std::optional<int> exit_code,
                   const nlohmann::json& errors, const std::string& now);
// Back to queued (a requeue): executionInfo cleared.
void requeue_execution(nlohmann::json& job, const std::string& now);

}  // namespace bai::arm
