#include "emulator/batch/work_rules.h"

#include "emulator/batch/batch_error.h"
#include "emulator/batch/pool_rules.h"

namespace bai::batch {

using nlohmann::json;

namespace {

void need_id(const json& body, const char* what) {
    if (!body.is_object()) throw BatchError(400, "InvalidRequestBody", "The specified Request Body is not syntactically valid.");
    if (!body.contains("id")) throw missing_property("id");
    if (!body["id"].is_string() || !is_valid_pool_id(body["id"].get<std::string>())) {
        throw invalid_property("id", body["id"].dump(), std::string("A ") + what + " id has 1 to 64 letters, digits, hyphens and underscores");
    }
}

void check_retry_count(const json& constraints, const std::string& path) {
    if (!constraints.contains("maxTaskRetryCount")) return;
    const json& v = constraints["maxTaskRetryCount"];
    if (!v.is_number_integer() || v.get<long long>() < -1) {
        throw invalid_property(path + "maxTaskRetryCount", v.dump(), "The value must be -1 (no limit) or an integer of 0 or more");
    }
}

}  // namespace

void check_job_to_add(const json& body) {
    need_id(body, "job");
    if (!body.contains("poolInfo")) throw missing_property("poolInfo");
    const json& pool = body["poolInfo"];
    if (!pool.is_object()) throw invalid_property("poolInfo", pool.dump(), "The value must be an object");
    if (pool.contains("autoPoolSpecification")) {
        throw invalid_property("poolInfo.autoPoolSpecification", pool["autoPoolSpecification"].dump(),
                               "Auto pools are not emulated: add a pool and name it in poolInfo.poolId");
    }
    if (!pool.contains("poolId") || !pool["poolId"].is_string() || pool["poolId"].get<std::string>().empty()) {
        throw missing_property("poolInfo.poolId");
    }
    if (body.contains("priority") && (!body["priority"].is_number_integer() || body["priority"].get<long long>() < -1000 ||
                                      body["priority"].get<long long>() > 1000)) {
        throw invalid_property("priority", body["priority"].dump(), "The priority is an integer from -1000 to 1000");
    }
    if (body.contains("constraints")) {
        if (!body["constraints"].is_object()) throw invalid_property("constraints", body["constraints"].dump(), "The value must be an object");
        check_retry_count(body["constraints"], "constraints.");
    }
}

json new_job_document(const json& body, const std::string& now) {
    json job = body;
    job["creationTime"] = now;
    job["state"] = "active";
    job["stateTransitionTime"] = now;
    if (!job.contains("priority")) job["priority"] = 0;
    if (!job.contains("onAllTasksComplete")) job["onAllTasksComplete"] = "noaction";
    if (!job.contains("onTaskFailure")) job["onTaskFailure"] = "noaction";
    json constraints = job.value("constraints", json::object());
    if (!constraints.contains("maxTaskRetryCount")) constraints["maxTaskRetryCount"] = 0;
    if (!constraints.contains("maxWallClockTime")) constraints["maxWallClockTime"] = "P10675199DT2H48M5.4775807S";
    job["constraints"] = constraints;
    job["executionInfo"] = {{"startTime", now}, {"poolId", body["poolInfo"]["poolId"]}};
    return job;
}

void check_task_to_add(const json& body) {
    need_id(body, "task");
    if (!body.contains("commandLine")) throw missing_property("commandLine");
    if (!body["commandLine"].is_string() || body["commandLine"].get<std::string>().empty()) {
        throw invalid_property("commandLine", body["commandLine"].dump(), "The command line is a non-empty string");
    }
    if (body.contains("constraints")) {
        if (!body["constraints"].is_object()) throw invalid_property("constraints", body["constraints"].dump(), "The value must be an object");
        check_retry_count(body["constraints"], "constraints.");
    }
    for (const char* list : {"resourceFiles", "outputFiles", "environmentSettings"}) {
        if (body.contains(list) && !body[list].is_array()) throw invalid_property(list, body[list].dump(), "The value must be a list");
    }
}

json new_task_document(const json& body, const json& job, const std::string& now) {
    json task = body;
    task["creationTime"] = now;
    task["state"] = "active";
    task["stateTransitionTime"] = now;
    json constraints = task.value("constraints", json::object());
    if (!constraints.contains("maxTaskRetryCount")) {
        constraints["maxTaskRetryCount"] = job["constraints"].value("maxTaskRetryCount", 0);
    }
    if (!constraints.contains("retentionTime")) constraints["retentionTime"] = "P7D";
    task["constraints"] = constraints;
    task["executionInfo"] = {{"retryCount", 0}, {"requeueCount", 0}};
    return task;
}

}  // namespace bai::batch
