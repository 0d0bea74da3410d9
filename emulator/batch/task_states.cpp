#include "emulator/batch/task_states.h"

#include "emulator/batch/task_tally.h"

#include "emulator/validation/duration.h"

namespace bai::batch {

using nlohmann::json;

json failure_info(const std::string& code, const std::string& message, const std::string& category) {
    return {{"category", category}, {"code", code}, {"message", message}};
}

json failure_exit_code() { return failure_info("FailureExitCode", "The task exited with an exit code representing a failure"); }

json task_ended() { return failure_info("TaskEnded", "Task Was Ended by User Request"); }

json wall_clock_expired() {
    return failure_info("MaxWallClockTimeExpiry", "The task ran longer than its constraints.maxWallClockTime and was terminated");
}

void move_state(json& doc, const std::string& state, const std::string& now) {
    doc["previousState"] = doc["state"];
    doc["previousStateTransitionTime"] = doc.value("stateTransitionTime", now);
    doc["state"] = state;
    doc["stateTransitionTime"] = now;
}

namespace {

// The exitOptions that apply to how the task ended, or null when its exitConditions name none.
json exit_options_for(const json& task) {
    const json conditions = task.value("exitConditions", json::object());
    if (!conditions.is_object()) return nullptr;
    const json info = task.value("executionInfo", json::object());
    if (info.contains("exitCode") && info["exitCode"].is_number_integer()) {
        const long long code = info["exitCode"].get<long long>();
        for (const json& entry : conditions.value("exitCodes", json::array())) {
            if (entry.is_object() && entry.value("code", code + 1) == code) return entry.value("exitOptions", json::object());
        }
        for (const json& range : conditions.value("exitCodeRanges", json::array())) {
            if (range.is_object() && range.value("start", code + 1) <= code && code <= range.value("end", code - 1)) {
                return range.value("exitOptions", json::object());
            }
        }
    }
    const std::string failure = info.contains("failureInfo") ? info["failureInfo"].value("code", "") : "";
    if (failure == "FileUploadMiscError" && conditions.contains("fileUploadError")) return conditions["fileUploadError"];
    if (failure.find("Download") != std::string::npos || failure.find("ResourceFile") != std::string::npos ||
        failure == "CommandProgramNotFound" || failure == "CommandLineParseError") {
        if (conditions.contains("preProcessingError")) return conditions["preProcessingError"];
    }
    if (conditions.contains("default")) return conditions["default"];
    return nullptr;
}

}  // namespace

bool satisfies_dependents(const json& task) {
    if (task.value("state", "") != "completed") return false;
    const bool succeeded = task.value("executionInfo", json::object()).value("result", "") == "success";
    const json options = exit_options_for(task);
    const std::string action = options.is_object() ? options.value("dependencyAction", "") : "";
    return succeeded ? action != "block" : action == "satisfy";
}

std::vector<std::string> dependency_ids(const json& task) {
    std::vector<std::string> ids;
    const json depends = task.value("dependsOn", json::object());
    if (!depends.is_object()) return ids;
    for (const json& id : depends.value("taskIds", json::array())) {
        if (id.is_string()) ids.push_back(id.get<std::string>());
    }
    for (const json& range : depends.value("taskIdRanges", json::array())) {
        if (!range.is_object()) continue;
        const long long start = range.value("start", 0LL), end = range.value("end", -1LL);
        for (long long id = start; id <= end; ++id) ids.push_back(std::to_string(id));
    }
    return ids;
}

void requeue_document(json& doc, const std::string& now) {
    move_state(doc, "active", now);
    doc["executionInfo"]["requeueCount"] = doc["executionInfo"].value("requeueCount", 0) + 1;
    doc["executionInfo"]["lastRequeueTime"] = now;
}

bool end_run(json& doc, int exit_code, const json& failure, const std::string& now) {
    json& info = doc["executionInfo"];
    const int retries = info.value("retryCount", 0);
    const int limit = doc["constraints"].value("maxTaskRetryCount", 0);
    if (exit_code >= 0) info["exitCode"] = exit_code;
    if (exit_code == 0 && failure.is_null()) {
        move_state(doc, "completed", now);
        info["endTime"] = now;
        info["result"] = "success";
        return false;
    }
    info["failureInfo"] = failure.is_null() ? failure_exit_code() : failure;
    if (limit == -1 || retries < limit) {
        move_state(doc, "active", now);
        info["retryCount"] = retries + 1;
        info["lastRetryTime"] = now;
        return true;
    }
    move_state(doc, "completed", now);
    info["endTime"] = now;
    info["result"] = "failure";
    return false;
}

void end_without_retry(json& doc, const json& failure, const std::string& now) {
    move_state(doc, "completed", now);
    json& info = doc["executionInfo"];
    info["endTime"] = now;
    info["result"] = "failure";
    info["failureInfo"] = failure;
}

std::string job_action_after(const json& task, const json& job) {
    if (job.value("onTaskFailure", "noaction") != "performexitoptionsjobaction") return "none";
    const json options = exit_options_for(task);
    if (options.is_object() && options.contains("jobAction") && options["jobAction"].is_string()) {
        return options["jobAction"].get<std::string>();
    }
    // The service's default: none for success, terminate for every other way of ending.
    return task.value("executionInfo", json::object()).value("result", "") == "failure" ? "terminate" : "none";
}

void complete_job(json& doc, const std::string& reason, const std::string& now) {
    move_state(doc, "completed", now);
    doc["executionInfo"]["endTime"] = now;
    doc["executionInfo"]["terminateReason"] = reason;
}

json count_tasks(const std::vector<json>& tasks) {
    TaskTally tally;
    for (const json& task : tasks) tally.count(task);
    return tally.to_json();
}

std::optional<std::chrono::seconds> limit_of(const json& constraints, const char* name) {
    if (!constraints.is_object() || !constraints.contains(name) || !constraints[name].is_string()) return std::nullopt;
    std::optional<std::chrono::seconds> limit = validation::parse_duration(constraints[name].get<std::string>());
    constexpr std::chrono::seconds kCentury{100LL * 365 * 86400};
    if (!limit || *limit > kCentury) return std::nullopt;
    return limit;
}

}  // namespace bai::batch
