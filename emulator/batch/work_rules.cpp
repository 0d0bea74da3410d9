#include "emulator/batch/work_rules.h"

#include "common/crypto/random_id.h"
#include "common/text/ascii.h"
#include "common/time/timestamps.h"
#include "emulator/batch/batch_error.h"
#include "emulator/batch/container_rules.h"
#include "emulator/batch/pool_rules.h"
#include "emulator/validation/duration.h"

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

// maxTaskRetryCount, and the durations (maxWallClockTime, retentionTime) in ISO 8601.
void check_constraints(const json& body) {
    if (!body.contains("constraints")) return;
    const json& constraints = body["constraints"];
    if (!constraints.is_object()) throw invalid_property("constraints", constraints.dump(), "The value must be an object");
    if (constraints.contains("maxTaskRetryCount")) {
        const json& v = constraints["maxTaskRetryCount"];
        if (!v.is_number_integer() || v.get<long long>() < -1) {
            throw invalid_property("constraints.maxTaskRetryCount", v.dump(), "The value must be -1 (no limit) or an integer of 0 or more");
        }
    }
    for (const char* name : {"maxWallClockTime", "retentionTime"}) {
        if (!constraints.contains(name) || constraints[name].is_null()) continue;
        const json& v = constraints[name];
        if (!v.is_string() || !validation::parse_duration(v.get<std::string>())) {
            throw invalid_property(std::string("constraints.") + name, v.dump(), "The value is an ISO 8601 duration such as PT1H30M");
        }
    }
}

void check_on_all_tasks_complete(const json& body) {
    if (!body.contains("onAllTasksComplete")) return;
    const json& v = body["onAllTasksComplete"];
    if (!v.is_string() || (v != "noaction" && v != "terminatejob")) {
        throw invalid_property("onAllTasksComplete", v.dump(), "The value must be noaction or terminatejob");
    }
}

void check_priority(const json& body) {
    if (body.contains("priority") && (!body["priority"].is_number_integer() || body["priority"].get<long long>() < -1000 ||
                                      body["priority"].get<long long>() > 1000)) {
        throw invalid_property("priority", body["priority"].dump(), "The priority is an integer from -1000 to 1000");
    }
}

// An auto pool: the pool to make for the job (as a pool to add is checked), how long it lives
// (job or jobschedule), an id prefix of at most 20 letters, digits, '-' and '_', keepAlive.
void check_auto_pool(const json& spec) {
    const std::string at = "poolInfo.autoPoolSpecification.";
    if (!spec.is_object()) throw invalid_property("poolInfo.autoPoolSpecification", spec.dump(), "The value must be an object");
    if (!spec.contains("poolLifetimeOption")) throw missing_property(at + "poolLifetimeOption");
    const json& lifetime = spec["poolLifetimeOption"];
    if (!lifetime.is_string() || (!text::iequals(lifetime.get<std::string>(), "job") &&
                                  !text::iequals(lifetime.get<std::string>(), "jobschedule"))) {
        throw invalid_property(at + "poolLifetimeOption", lifetime.dump(), "The value must be job or jobschedule");
    }
    if (spec.contains("autoPoolIdPrefix")) {
        const json& prefix = spec["autoPoolIdPrefix"];
        if (!prefix.is_string() || prefix.get<std::string>().size() > 20 ||
            (!prefix.get<std::string>().empty() && !is_valid_pool_id(prefix.get<std::string>()))) {
            throw invalid_property(at + "autoPoolIdPrefix", prefix.dump(),
                                   "A prefix has at most 20 letters, digits, hyphens and underscores");
        }
    }
    if (spec.contains("keepAlive") && !spec["keepAlive"].is_boolean()) {
        throw invalid_property(at + "keepAlive", spec["keepAlive"].dump(), "The value must be true or false");
    }
    if (!spec.contains("pool")) throw missing_property(at + "pool");
    if (!spec["pool"].is_object()) throw invalid_property(at + "pool", spec["pool"].dump(), "The value must be an object");
    json pool = spec["pool"];
    pool["id"] = "auto";  // the checks of a pool to add want one; the pool's own is made
    check_pool_to_add(pool);
}

void check_pool_info(const json& body) {
    const json& pool = body["poolInfo"];
    if (!pool.is_object()) throw invalid_property("poolInfo", pool.dump(), "The value must be an object");
    const bool named = pool.contains("poolId") && !pool["poolId"].is_null();
    if (pool.contains("autoPoolSpecification") && !pool["autoPoolSpecification"].is_null()) {
        if (named) {
            throw invalid_property("poolInfo.poolId", pool["poolId"].dump(),
                                   "A job names a pool or specifies an auto pool, not both");
        }
        return check_auto_pool(pool["autoPoolSpecification"]);
    }
    if (!named || !pool["poolId"].is_string() || pool["poolId"].get<std::string>().empty()) {
        throw missing_property("poolInfo.poolId");
    }
}

}  // namespace

namespace {

// A job's auto pool specification with the service's defaults, as the job shows it.
void complete_auto_pool(json& job) {
    if (!job["poolInfo"].contains("autoPoolSpecification")) return;
    json& spec = job["poolInfo"]["autoPoolSpecification"];
    if (!spec.contains("keepAlive")) spec["keepAlive"] = false;
    spec["pool"] = pool_specification(spec["pool"]);
}

// The pool a job to add runs on: the one it names, or its auto pool's new id (PREFIX_GUID).
std::string pool_id_for_job(const json& body) {
    const json& info = body["poolInfo"];
    if (info.contains("poolId") && info["poolId"].is_string()) return info["poolId"];
    const std::string prefix = info["autoPoolSpecification"].value("autoPoolIdPrefix", "");
    return (prefix.empty() ? "" : prefix + "_") + crypto::uuid4();
}

}  // namespace

std::string pool_of_job(const json& job) {
    if (job.contains("executionInfo") && job["executionInfo"].is_object()) {
        const std::string id = job["executionInfo"].value("poolId", "");
        if (!id.empty()) return id;
    }
    return job.contains("poolInfo") && job["poolInfo"].is_object() ? job["poolInfo"].value("poolId", "") : "";
}

bool mark_job_deleting(json& job) {
    if (job.value("state", "") == "deleting") return false;
    job["previousState"] = job["state"];
    job["state"] = "deleting";
    job["stateTransitionTime"] = time::now_iso8601();
    return true;
}

bool job_owns_pool(const json& job) {
    if (!job.contains("poolInfo") || !job["poolInfo"].is_object() || !job["poolInfo"].contains("autoPoolSpecification")) {
        return false;
    }
    const json& spec = job["poolInfo"]["autoPoolSpecification"];
    return spec.is_object() && text::iequals(spec.value("poolLifetimeOption", ""), "job") && !spec.value("keepAlive", false);
}

// A job's manager task: a task to add (its properties named under jobManagerTask.).
void check_job_manager(const json& body) {
    if (!body.contains("jobManagerTask")) return;
    const json& manager = body["jobManagerTask"];
    if (!manager.is_object()) throw invalid_property("jobManagerTask", manager.dump(), "The value must be an object");
    check_under("jobManagerTask.", [&] { check_task_to_add(manager); });
    if (manager.contains("killJobOnCompletion") && !manager["killJobOnCompletion"].is_boolean()) {
        throw invalid_property("jobManagerTask.killJobOnCompletion", manager["killJobOnCompletion"].dump(), "The value must be true or false");
    }
}

void check_job_to_add(const json& body) {
    need_id(body, "job");
    check_job_manager(body);
    for (const char* task : {"jobPreparationTask", "jobReleaseTask"}) {
        if (body.contains(task)) check_container_settings(body[task], std::string(task) + ".");
    }
    if (!body.contains("poolInfo")) throw missing_property("poolInfo");
    check_pool_info(body);
    check_priority(body);
    check_constraints(body);
    check_on_all_tasks_complete(body);
    if (body.contains("onTaskFailure") && body["onTaskFailure"] != "noaction" && body["onTaskFailure"] != "performexitoptionsjobaction") {
        throw invalid_property("onTaskFailure", body["onTaskFailure"].dump(), "The value must be noaction or performexitoptionsjobaction");
    }
}

void check_job_change(const json& body, const json& job, bool replace) {
    if (!body.is_object()) throw BatchError(400, "InvalidRequestBody", "The specified Request Body is not syntactically valid.");
    if (replace && !body.contains("poolInfo")) throw missing_property("poolInfo");
    if (body.contains("poolInfo")) check_pool_info(body);
    check_priority(body);
    check_constraints(body);
    check_on_all_tasks_complete(body);
    if (job.value("onAllTasksComplete", "noaction") == "terminatejob" &&
        (body.value("onAllTasksComplete", replace ? "noaction" : "terminatejob") == "noaction")) {
        throw invalid_property("onAllTasksComplete", body.value("onAllTasksComplete", json("noaction")).dump(),
                               "A job whose onAllTasksComplete is terminatejob cannot go back to noaction");
    }
    if (body.contains("poolInfo") && !text::iequals(body["poolInfo"].value("poolId", ""), job["poolInfo"].value("poolId", "")) &&
        job.value("state", "") != "disabled") {
        throw BatchError(409, "JobNotDisabled", "The pool of a job may change only while the job is disabled.",
                         {{"PropertyName", "poolInfo.poolId"}});
    }
}

void apply_job_change(json& job, const json& body, bool replace) {
    if (replace) {
        job.erase("metadata");
        job["priority"] = 0;
        job["onAllTasksComplete"] = "noaction";
        job["constraints"] = json::object();
    }
    for (const char* field : {"priority", "maxParallelTasks", "allowTaskPreemption", "onAllTasksComplete", "poolInfo", "metadata"}) {
        if (body.contains(field)) job[field] = body[field];
    }
    if (body.contains("constraints")) {
        for (const auto& [name, value] : body["constraints"].items()) job["constraints"][name] = value;
    }
    json& constraints = job["constraints"];
    if (!constraints.contains("maxTaskRetryCount")) constraints["maxTaskRetryCount"] = 0;
    if (!constraints.contains("maxWallClockTime")) constraints["maxWallClockTime"] = "P10675199DT2H48M5.4775807S";
    complete_auto_pool(job);
    // An auto pool keeps the id it was given.
    if (job["poolInfo"].contains("poolId")) job["executionInfo"]["poolId"] = job["poolInfo"]["poolId"];
}

void check_task_lists(const json& task, const std::string& prefix) {
    check_container_settings(task, prefix);
    auto string_at = [&](const json& item, const std::string& path, const char* name, bool required) {
        if (!item.contains(name)) {
            if (required) throw missing_property(path + name);
            return;
        }
        if (!item[name].is_string()) throw invalid_property(path + name, item[name].dump(), "The value must be a string");
    };
    for (const char* list : {"resourceFiles", "outputFiles", "environmentSettings", "commonResourceFiles"}) {
        if (!task.contains(list)) continue;
        if (!task[list].is_array()) throw invalid_property(prefix + list, task[list].dump(), "The value must be a list");
        for (size_t i = 0; i < task[list].size(); ++i) {
            const json& item = task[list][i];
            const std::string path = prefix + list + "[" + std::to_string(i) + "].";
            if (!item.is_object()) throw invalid_property(prefix + list + "[" + std::to_string(i) + "]", item.dump(), "The value must be an object");
            if (std::string(list) == "environmentSettings") {
                string_at(item, path, "name", true);
                string_at(item, path, "value", false);
            } else if (std::string(list) == "resourceFiles" || std::string(list) == "commonResourceFiles") {
                for (const char* name : {"httpUrl", "storageContainerUrl", "autoStorageContainerName", "blobPrefix", "filePath", "fileMode"}) {
                    string_at(item, path, name, false);
                }
                if (!item.contains("httpUrl") && !item.contains("storageContainerUrl")) {
                    throw missing_property(path + "httpUrl");  // or storageContainerUrl
                }
                const std::string file_path = item.value("filePath", "");
                if (!file_path.empty() && (file_path[0] == '/' || ("/" + file_path + "/").find("/../") != std::string::npos)) {
                    throw invalid_property(path + "filePath", item["filePath"].dump(),
                                           "The path is relative to the task's working directory and cannot leave it");
                }
            } else {
                string_at(item, path, "filePattern", true);
                const json destination = item.value("destination", json::object()).value("container", json());
                if (!destination.is_object()) throw missing_property(path + "destination.container");
                string_at(destination, path + "destination.container.", "containerUrl", true);
                string_at(destination, path + "destination.container.", "path", false);
                const json options = item.value("uploadOptions", json::object());
                if (options.is_object() && options.contains("uploadCondition")) {
                    const json& c = options["uploadCondition"];
                    if (!c.is_string() || (!text::iequals(c.get<std::string>(), "taskSuccess") &&
                                           !text::iequals(c.get<std::string>(), "taskFailure") &&
                                           !text::iequals(c.get<std::string>(), "taskCompletion"))) {
                        throw invalid_property(path + "uploadOptions.uploadCondition", c.dump(),
                                               "The value must be taskSuccess, taskFailure or taskCompletion");
                    }
                }
            }
        }
    }
}

void check_task_change(const json& body) {
    if (!body.is_object()) throw BatchError(400, "InvalidRequestBody", "The specified Request Body is not syntactically valid.");
    check_constraints(body);
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
    job["executionInfo"] = {{"startTime", now}, {"poolId", pool_id_for_job(body)}};
    if (!job.contains("usesTaskDependencies")) job["usesTaskDependencies"] = false;
    // The service's defaults, as its answers show them.
    const json auto_user{{"autoUser", {{"scope", "pool"}, {"elevationLevel", "nonadmin"}}}};
    if (job.contains("jobPreparationTask") && job["jobPreparationTask"].is_object()) {
        json& task = job["jobPreparationTask"];
        if (!task.contains("id")) task["id"] = "jobpreparation";
        json constraints = task.value("constraints", json::object());
        if (!constraints.contains("maxWallClockTime")) constraints["maxWallClockTime"] = "P10675199DT2H48M5.4775807S";
        if (!constraints.contains("retentionTime")) constraints["retentionTime"] = "P7D";
        if (!constraints.contains("maxTaskRetryCount")) constraints["maxTaskRetryCount"] = 0;
        task["constraints"] = constraints;
        if (!task.contains("userIdentity")) task["userIdentity"] = auto_user;
        if (!task.contains("waitForSuccess")) task["waitForSuccess"] = true;
        if (!task.contains("rerunOnNodeRebootAfterSuccess")) task["rerunOnNodeRebootAfterSuccess"] = true;
    }
    if (job.contains("jobReleaseTask") && job["jobReleaseTask"].is_object()) {
        json& task = job["jobReleaseTask"];
        if (!task.contains("id")) task["id"] = "jobrelease";
        if (!task.contains("maxWallClockTime")) task["maxWallClockTime"] = "PT15M";
        if (!task.contains("retentionTime")) task["retentionTime"] = "P7D";
        if (!task.contains("userIdentity")) task["userIdentity"] = auto_user;
    }
    if (job.contains("jobManagerTask") && job["jobManagerTask"].is_object()) {
        json& manager = job["jobManagerTask"];
        for (const char* flag : {"killJobOnCompletion", "runExclusive", "allowLowPriorityNode"}) {
            if (!manager.contains(flag)) manager[flag] = true;
        }
        if (!manager.contains("userIdentity")) manager["userIdentity"] = auto_user;
        json constraints = manager.value("constraints", json::object());
        if (!constraints.contains("maxWallClockTime")) constraints["maxWallClockTime"] = "P10675199DT2H48M5.4775807S";
        if (!constraints.contains("retentionTime")) constraints["retentionTime"] = "P7D";
        if (!constraints.contains("maxTaskRetryCount")) constraints["maxTaskRetryCount"] = 0;
        manager["constraints"] = constraints;
    }
    complete_auto_pool(job);
    return job;
}

json job_manager_task_body(const json& job) {
    json task = job.value("jobManagerTask", json());
    if (!task.is_object()) return nullptr;
    for (const char* only_the_managers : {"killJobOnCompletion", "runExclusive", "allowLowPriorityNode"}) task.erase(only_the_managers);
    // Where the nodes may run it (fields of the emulator's own, never sent).
    task["_runExclusive"] = job["jobManagerTask"].value("runExclusive", true);
    task["_allowLowPriorityNode"] = job["jobManagerTask"].value("allowLowPriorityNode", true);
    return task;
}

namespace {

// dependsOn: taskIds (strings) and taskIdRanges ({start, end}, 0 <= start <= end), at most 64000
// characters of ids and 10000 ids in ranges all told (the emulator's bound on a task's wait list).
void check_dependencies(const json& body) {
    if (!body.contains("dependsOn")) return;
    const json& depends = body["dependsOn"];
    if (!depends.is_object()) throw invalid_property("dependsOn", depends.dump(), "The value must be an object");
    size_t characters = 0;
    if (depends.contains("taskIds")) {
        const json& ids = depends["taskIds"];
        if (!ids.is_array()) throw invalid_property("dependsOn.taskIds", ids.dump(), "The value must be a list of task ids");
        for (const json& id : ids) {
            if (!id.is_string() || !is_valid_pool_id(id.get<std::string>())) {
                throw invalid_property("dependsOn.taskIds", id.dump(), "A task id has 1 to 64 letters, digits, hyphens and underscores");
            }
            characters += id.get<std::string>().size();
        }
        if (characters > 64000) throw invalid_property("dependsOn.taskIds", "", "The ids have more than 64000 characters");
    }
    long long ranged = 0;
    if (depends.contains("taskIdRanges")) {
        const json& ranges = depends["taskIdRanges"];
        if (!ranges.is_array()) throw invalid_property("dependsOn.taskIdRanges", ranges.dump(), "The value must be a list of ranges");
        for (const json& range : ranges) {
            if (!range.is_object() || !range.contains("start") || !range.contains("end") || !range["start"].is_number_integer() ||
                !range["end"].is_number_integer() || range["start"].get<long long>() < 0 ||
                range["start"].get<long long>() > range["end"].get<long long>()) {
                throw invalid_property("dependsOn.taskIdRanges", range.dump(), "A range is {start, end} with 0 <= start <= end");
            }
            ranged += range["end"].get<long long>() - range["start"].get<long long>() + 1;
        }
        if (ranged > 10000) throw invalid_property("dependsOn.taskIdRanges", ranges.dump(), "The ranges name more than 10000 tasks");
    }
}

// multiInstanceSettings: a coordination command line, at least one instance, common resource
// files as resource files are; such a task takes one slot of each of its nodes.
void check_multi_instance(const json& body) {
    if (!body.contains("multiInstanceSettings")) return;
    const json& settings = body["multiInstanceSettings"];
    if (!settings.is_object()) throw invalid_property("multiInstanceSettings", settings.dump(), "The value must be an object");
    if (!settings.contains("coordinationCommandLine")) throw missing_property("multiInstanceSettings.coordinationCommandLine");
    const json& line = settings["coordinationCommandLine"];
    if (!line.is_string() || line.get<std::string>().empty()) {
        throw invalid_property("multiInstanceSettings.coordinationCommandLine", line.dump(), "The command line is a non-empty string");
    }
    if (settings.contains("numberOfInstances")) {
        const json& count = settings["numberOfInstances"];
        // More than the pool has is no error: the task waits for them.
        if (!count.is_number_integer() || count.get<long long>() < 1 || count.get<long long>() > 100000) {
            throw invalid_property("multiInstanceSettings.numberOfInstances", count.dump(), "The number of instances is at least 1");
        }
    }
    check_task_lists(settings, "multiInstanceSettings.");
    if (body.contains("requiredSlots") && body["requiredSlots"] != 1) {
        throw invalid_property("requiredSlots", body["requiredSlots"].dump(), "For multi-instance Tasks, this must be 1.");
    }
}

}  // namespace

void check_task_to_add(const json& body) {
    need_id(body, "task");
    check_dependencies(body);
    if (!body.contains("commandLine")) throw missing_property("commandLine");
    // A container's task may leave it empty: its image's own command runs (the service's rule for
    // containerSettings).
    const bool image_command = body.contains("containerSettings");
    if (!body["commandLine"].is_string() || (body["commandLine"].get<std::string>().empty() && !image_command)) {
        throw invalid_property("commandLine", body["commandLine"].dump(), "The command line is a non-empty string");
    }
    check_constraints(body);
    check_task_lists(body, "");
    check_multi_instance(body);
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
    if (!constraints.contains("maxWallClockTime")) constraints["maxWallClockTime"] = "P10675199DT2H48M5.4775807S";
    task["constraints"] = constraints;
    // The service's defaults, as its answers show them.
    if (!task.contains("userIdentity")) task["userIdentity"] = {{"autoUser", {{"scope", "pool"}, {"elevationLevel", "nonadmin"}}}};
    if (!task.contains("requiredSlots")) task["requiredSlots"] = 1;
    task["executionInfo"] = {{"retryCount", 0}, {"requeueCount", 0}};
    return task;
}

}  // namespace bai::batch
