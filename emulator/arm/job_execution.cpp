#include "emulator/arm/job_execution.h"

namespace bai::arm {

using nlohmann::json;

json execution_error(const std::string& code, const std::string& message) {
    return {{"code", code}, {"message", message}};
}

json job_terminated_error() {
    return execution_error("JobTerminated", "The specified job has been terminated by the user");
}

void end_execution(json& job, const std::string& state, std::optional<int> exit_code, const json& errors,
                   const std::string& now) {
    json& p = job["properties"];
    p["executionState"] = state;
    p["executionStateTransitionTime"] = now;
    json& info = p["executionInfo"];
    if (!info.is_object()) info = json::object();
    if (!info.contains("startTime")) info["startTime"] = now;
    info["endTime"] = now;
    if (exit_code) {
        info["exitCode"] = *exit_code;
    } else {
        info.erase("exitCode");
    }
    if (!errors.empty()) info["errors"] = errors;
}

void requeue_execution(json& job, const std::string& now) {
    json& p = job["properties"];
    p["executionState"] = "queued";
    p["executionStateTransitionTime"] = now;
    p.erase("executionInfo");
}

}  // namespace bai::arm
