// The Batch API's jobs and tasks: add, get, list, patch, update, disable, enable, terminate,
// delete a job and count its tasks; add (one or a collection), get, list, update, terminate,
// delete a task, and its files (stdout.txt, stderr.txt, wd/...: list, get, properties, delete).
#include "common/time/timestamps.h"
#include "emulator/batch/batch_api.h"
#include "emulator/batch/pool_rules.h"
#include "emulator/batch/batch_error.h"
#include "emulator/batch/body_properties.h"
#include "emulator/batch/batch_http.h"
#include "emulator/batch/node_files.h"
#include "emulator/batch/odata_query.h"
#include "emulator/batch/task_states.h"
#include "emulator/batch/usage_stats.h"
#include "emulator/batch/work_rules.h"

namespace bai::batch {

using nlohmann::json;

namespace {

constexpr size_t kMaxTasksPerCollection = 100;

BatchError job_not_found() { return BatchError(404, "JobNotFound", "The specified job does not exist."); }
BatchError task_not_found() { return BatchError(404, "TaskNotFound", "The specified task does not exist."); }

}  // namespace

void BatchApi::serve_work(http::Routes& server) {
    route(server, "POST", "/jobs", [this](auto& a, auto& q, auto& r) { add_job(a, q, r); });
    route(server, "GET", "/jobs", [this](auto& a, auto& q, auto& r) { list_jobs(a, q, r); });
    route(server, "GET", R"(/jobs/([^/]+))", [this](auto& a, auto& q, auto& r) { get_job(a, q, r); });
    route(server, "DELETE", R"(/jobs/([^/]+))", [this](auto& a, auto& q, auto& r) { delete_job(a, q, r); });
    route(server, "PATCH", R"(/jobs/([^/]+))", [this](auto& a, auto& q, auto& r) { change_job(a, q, r, false); });
    route(server, "PUT", R"(/jobs/([^/]+))", [this](auto& a, auto& q, auto& r) { change_job(a, q, r, true); });
    route(server, "POST", R"(/jobs/([^/]+)/(disable|enable|terminate))", [this](auto& a, auto& q, auto& r) { move_job_state(a, q, r); });
    route(server, "GET", R"(/jobs/([^/]+)/taskcounts)", [this](auto& a, auto& q, auto& r) { count_job_tasks(a, q, r); });
    route(server, "GET", R"(/jobs/([^/]+)/jobpreparationandreleasetaskstatus)",
          [this](auto& a, auto& q, auto& r) { list_job_task_status(a, q, r); });
    route(server, "POST", R"(/jobs/([^/]+)/tasks)", [this](auto& a, auto& q, auto& r) { add_task(a, q, r); });
    route(server, "POST", R"(/jobs/([^/]+)/addtaskcollection)", [this](auto& a, auto& q, auto& r) { add_task_collection(a, q, r); });
    route(server, "GET", R"(/jobs/([^/]+)/tasks)", [this](auto& a, auto& q, auto& r) { list_tasks(a, q, r); });
    route(server, "GET", R"(/jobs/([^/]+)/tasks/([^/]+))", [this](auto& a, auto& q, auto& r) { get_task(a, q, r); });
    route(server, "PUT", R"(/jobs/([^/]+)/tasks/([^/]+))", [this](auto& a, auto& q, auto& r) { update_task(a, q, r); });
    route(server, "DELETE", R"(/jobs/([^/]+)/tasks/([^/]+))", [this](auto& a, auto& q, auto& r) { delete_task(a, q, r); });
    route(server, "POST", R"(/jobs/([^/]+)/tasks/([^/]+)/terminate)", [this](auto& a, auto& q, auto& r) { terminate_task(a, q, r); });
    route(server, "POST", R"(/jobs/([^/]+)/tasks/([^/]+)/reactivate)", [this](auto& a, auto& q, auto& r) { reactivate_task(a, q, r); });
    // A multi-instance task's subtasks (none for another task, or before it has run).
    route(server, "GET", R"(/jobs/([^/]+)/tasks/([^/]+)/subtasksinfo)", [this](auto& a, auto& q, auto& r) {
        const StoredEntity task = need_task(a, q.matches[1], q.matches[2]);
        json out{{"odata.metadata", base_url(q) + "/$metadata#subtaskinfos"}, {"value", task.body.value("_subtasks", json::array())}};
        for (json& subtask : out["value"]) {
            json& node = subtask["nodeInfo"];
            const std::string node_url = base_url(q) + "/" + node.value("nodeUrl", "");
            node["nodeUrl"] = node_url;
            node["taskRootDirectoryUrl"] = node_url + "/files/" + node.value("taskRootDirectory", "");
        }
        r.set_content(out.dump(), "application/json;odata=minimalmetadata");
    });
    route(server, "GET", R"(/jobs/([^/]+)/tasks/([^/]+)/files)", [this](auto& a, auto& q, auto& r) { list_task_files(a, q, r); });
    // httplib hands HEAD (the SDK's get_properties_from_task) to the GET route.
    route(server, "GET", R"(/jobs/([^/]+)/tasks/([^/]+)/files/(.+))", [this](auto& a, auto& q, auto& r) { get_task_file(a, q, r); });
    route(server, "DELETE", R"(/jobs/([^/]+)/tasks/([^/]+)/files/(.+))", [this](auto& a, auto& q, auto& r) { delete_task_file(a, q, r); });
}

StoredEntity BatchApi::need_job(const BatchAccount& account, const std::string& id) const {
    std::optional<StoredEntity> job = store_.get(account.name, kJobs, id);
    if (!job) throw job_not_found();
    return *job;
}

void BatchApi::add_job(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    json body = parse_body(req);
    check_job_to_add(body);
    refuse_unknown_properties(body, "JobAddParameter");
    const std::string now = time::format_iso8601(time::now());
    json job = new_job_document(body, now);
    // When its maxWallClockTime counts from, kept with it from the start: written later, the
    // job's ETag would change under a client that has just read it.
    job["_addedTicks"] = time::to_ticks(nodes_.now());
    std::optional<json> auto_pool;
    if (body["poolInfo"].contains("autoPoolSpecification")) {
        json spec = body["poolInfo"]["autoPoolSpecification"]["pool"];
        packages_.check_references(account.name, spec.value("applicationPackageReferences", json::array()),
                                   "poolInfo.autoPoolSpecification.pool.applicationPackageReferences");
        spec["id"] = job["executionInfo"]["poolId"];
        check_pool_network(spec, [this](const std::string& id) { return store_.arm_document(id); });
        auto_pool = new_pool_document(spec, now);
    }
    if (!store_.add(account.name, kJobs, job)) throw BatchError(409, "JobExists", "The specified job already exists.");
    // The job's auto pool, made with it (and removed with it: job_owns_pool).
    if (auto_pool) {
        store_.add(account.name, kPools, *auto_pool);
        nodes_.pool_changed(account.name, (*auto_pool)["id"]);
    }
    nodes_.job_added(account.name, body["id"]);
    // Its manager task starts with it.
    if (json manager = job_manager_task_body(job); manager.is_object()) put_task(account, need_job(account, body["id"]), manager);
    send_created(res, need_job(account, body["id"]), base_url(req) + "/jobs/" + body["id"].get<std::string>());
}

// PATCH (`replace` false: what the body names) or PUT (true: the rest back to its defaults).
void BatchApi::change_job(const BatchAccount& account, const httplib::Request& req, httplib::Response& res, bool replace) {
    const std::string id = req.matches[1];
    json body = parse_body(req);
    refuse_unknown_properties(body, replace ? "JobUpdateParameter" : "JobPatchParameter");
    if (has_conditions(req)) check_conditions(req, need_job(account, id));
    std::optional<StoredEntity> job = store_.update(account.name, kJobs, id, [&](json& doc) {
        need_job_changeable(doc);
        check_job_change(body, doc, replace);
        apply_job_change(doc, body, replace);
        return true;
    });
    if (!job) throw job_not_found();
    nodes_.job_changed(account.name, id);
    set_entity_headers(res, *job);
    res.set_header("DataServiceId", base_url(req) + "/jobs/" + id);
}

// disable (disableTasks: requeue, terminate, wait), enable, terminate (terminateReason).
void BatchApi::move_job_state(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    const std::string id = req.matches[1], action = req.matches[2];
    json body = req.body.empty() ? json::object() : parse_body(req);
    if (has_conditions(req)) check_conditions(req, need_job(account, id));
    std::string option;
    if (action == "disable") {
        if (!body.contains("disableTasks")) throw missing_property("disableTasks");
        option = body["disableTasks"].is_string() ? body["disableTasks"].get<std::string>() : "";
        if (option != "requeue" && option != "terminate" && option != "wait") {
            throw invalid_property("disableTasks", body["disableTasks"].dump(), "The value must be requeue, terminate or wait");
        }
    }
    if (action == "terminate" && body.contains("terminateReason") && !body["terminateReason"].is_string()) {
        throw invalid_property("terminateReason", body["terminateReason"].dump(), "The value must be a string");
    }
    if (action == "disable") refuse_unknown_properties(body, "JobDisableParameter");
    if (action == "terminate") refuse_unknown_properties(body, "JobTerminateParameter");
    const std::string now = time::format_iso8601(time::now());
    std::optional<StoredEntity> job = store_.update(account.name, kJobs, id, [&](json& doc) {
        const std::string state = doc.value("state", "");
        if (action == "enable") {
            if (state != "disabled") throw BatchError(409, "JobNotDisabled", "The specified job is not in a disabled state.");
            move_state(doc, "active", now);
            return true;
        }
        need_job_changeable(doc);
        if (action == "disable") {
            if (state != "active") throw BatchError(409, "JobNotActive", "The specified job is not in an active state.");
            move_state(doc, "disabled", now);
            return true;
        }
        doc["executionInfo"]["terminateReason"] = body.value("terminateReason", "UserTerminate");
        move_state(doc, "terminating", now);
        return true;
    });
    if (!job) throw job_not_found();
    if (action == "enable") nodes_.job_enabled(account.name, id);
    if (action == "disable") nodes_.job_disabled(account.name, id, option);
    if (action == "terminate") nodes_.job_terminating(account.name, id);
    set_entity_headers(res, *job);
    res.set_header("DataServiceId", base_url(req) + "/jobs/" + id);
    res.status = 202;
}

void BatchApi::count_job_tasks(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    const std::string id = req.matches[1];
    need_job(account, id);
    json out = store_.task_tally(account.name, id).to_json();
    out["odata.metadata"] = base_url(req) + "/$metadata#taskcountsresult/@Element";
    res.set_content(out.dump(), "application/json;odata=minimalmetadata");
}

// Where the job's preparation and release tasks ran, with the URLs of the nodes and their
// directories under the account's URL as this request addressed it.
void BatchApi::list_job_task_status(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    const std::string id = req.matches[1];
    need_job(account, id);
    json statuses = nodes_.job_task_status(account.name, id);
    for (json& status : statuses) {
        const std::string node_url = base_url(req) + "/" + status.value("nodeUrl", "");
        status["nodeUrl"] = node_url;
        for (const char* kind : {"jobPreparationTaskExecutionInfo", "jobReleaseTaskExecutionInfo"}) {
            if (status.contains(kind) && status[kind].contains("taskRootDirectory")) {
                status[kind]["taskRootDirectoryUrl"] = node_url + "/files/" + status[kind].value("taskRootDirectory", "");
            }
        }
    }
    send_computed_list(req, res, statuses, base_url(req) + "/$metadata#jobpreparationandreleasetaskstatuslist");
}

void BatchApi::get_job(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    StoredEntity job = need_job(account, req.matches[1]);
    if (answered_not_modified(req, res, job)) return;
    json out = job_view(req, job);
    if (std::optional<std::vector<std::string>> fields = select_of(req)) out = select_fields(out, *fields);
    out["odata.metadata"] = base_url(req) + "/$metadata#jobs/@Element";
    set_entity_headers(res, job);
    res.set_content(out.dump(), "application/json;odata=minimalmetadata");
}

void BatchApi::list_jobs(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    send_list(account, req, res, kJobs, "/jobs", "jobs", [this, &req](const StoredEntity& job, const std::string&) {
        return job_view(req, job);
    });
}

json BatchApi::job_view(const httplib::Request& req, const StoredEntity& job) {
    const std::string url = base_url(req) + "/jobs/" + job.body.value("id", "");
    json out = view(job, url);
    if (expands_stats(req)) {
        TaskTotals tasks;
        store_.for_each_in_scope(job.account, tasks_of(job.body.value("id", "")), [&](StoredEntity& task) { tasks.add(task.body); });
        json record{{"startTime", job.body.value("creationTime", "")}};
        out["stats"] = job_statistics(tasks, record, url + "/stats", nodes_.now());
    }
    return out;
}

// The job is `deleting` while its running tasks are stopped; then it and its tasks are gone.
void BatchApi::delete_job(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    const std::string id = req.matches[1];
    if (has_conditions(req)) check_conditions(req, need_job(account, id));
    std::optional<StoredEntity> job = store_.update(account.name, kJobs, id, mark_job_deleting);
    if (!job) throw job_not_found();
    nodes_.job_deleting(account.name, id);
    res.status = 202;
}

std::optional<StoredEntity> BatchApi::put_task(const BatchAccount& account, const StoredEntity& job, const json& body) {
    const std::string job_id = job.body.value("id", "");
    if (body.contains("dependsOn") && !job.body.value("usesTaskDependencies", false)) {
        throw BatchError(409, "TaskDependenciesNotSpecifiedOnJob",
                         "The specified task has dependencies but the job does not use task dependencies (usesTaskDependencies).");
    }
    if (!store_.add(account.name, tasks_of(job_id), new_task_document(body, job.body, time::format_iso8601(time::now())))) {
        return std::nullopt;
    }
    nodes_.task_added(account.name, pool_of_job(job.body), job_id, body);
    return store_.get(account.name, tasks_of(job_id), body["id"]);
}

void BatchApi::add_task(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    StoredEntity job = need_job(account, req.matches[1]);
    json body = parse_body(req);
    need_job_changeable(job.body);  // a disabled job takes tasks: they wait until it is enabled
    check_task_to_add(body);
    refuse_unknown_properties(body, "TaskAddParameter");
    packages_.check_references(account.name, body.value("applicationPackageReferences", json::array()), "applicationPackageReferences");
    std::optional<StoredEntity> task = put_task(account, job, body);
    if (!task) throw BatchError(409, "TaskExists", "The specified task already exists.");
    send_created(res, *task, base_url(req) + "/jobs/" + job.body.value("id", "") + "/tasks/" + body["id"].get<std::string>());
}

// Each task of the collection is added or refused on its own: the answer lists every one's
// status (success, or clienterror with the error), in the order sent.
void BatchApi::add_task_collection(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    StoredEntity job = need_job(account, req.matches[1]);
    json body = parse_body(req);
    if (!body.contains("value") || !body["value"].is_array()) throw missing_property("value");
    if (body["value"].size() > kMaxTasksPerCollection) {
        throw BatchError(400, "RequestBodyTooLarge", "The request body is too large and exceeds the maximum permissible limit.",
                         {{"MaxLimit", std::to_string(kMaxTasksPerCollection) + " tasks"}});
    }
    need_job_changeable(job.body);
    json results = json::array();
    for (const json& task : body["value"]) {
        json result{{"taskId", task.is_object() ? task.value("id", "") : ""}};
        try {
            check_task_to_add(task);
            refuse_unknown_properties(task, "TaskAddParameter");
            packages_.check_references(account.name, task.value("applicationPackageReferences", json::array()),
                                       "applicationPackageReferences");
            std::optional<StoredEntity> added = put_task(account, job, task);
            if (!added) throw BatchError(409, "TaskExists", "The specified task already exists.");
            result["status"] = "success";
            result["eTag"] = added->etag;
            result["lastModified"] = time::format_iso8601(time::from_ticks(added->modified_ticks));
            result["location"] = base_url(req) + "/jobs/" + job.body.value("id", "") + "/tasks/" + task.value("id", "");
        } catch (const BatchError& e) {
            json values = json::array();
            for (const auto& [key, value] : e.values) values.push_back({{"key", key}, {"value", value}});
            result["status"] = "clienterror";
            result["error"] = {{"code", e.code}, {"message", {{"lang", "en-US"}, {"value", e.what()}}}, {"values", values}};
        }
        results.push_back(std::move(result));
    }
    json out{{"odata.metadata", base_url(req) + "/$metadata#taskaddresult"}, {"value", results}};
    res.set_content(out.dump(), "application/json;odata=minimalmetadata");
}

void BatchApi::get_task(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    const std::string job_id = req.matches[1], task_id = req.matches[2];
    need_job(account, job_id);
    std::optional<StoredEntity> task = store_.get(account.name, tasks_of(job_id), task_id);
    if (!task) throw task_not_found();
    if (answered_not_modified(req, res, *task)) return;
    json out = task_view(req, *task, base_url(req) + "/jobs/" + job_id + "/tasks/" + task->body.value("id", ""));
    if (std::optional<std::vector<std::string>> fields = select_of(req)) out = select_fields(out, *fields);
    out["odata.metadata"] = base_url(req) + "/$metadata#tasks/@Element";
    set_entity_headers(res, *task);
    res.set_content(out.dump(), "application/json;odata=minimalmetadata");
}

void BatchApi::list_tasks(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    const std::string job_id = req.matches[1];
    need_job(account, job_id);
    send_list(account, req, res, tasks_of(job_id), "/jobs/" + job_id + "/tasks", "tasks",
              [this, &req](const StoredEntity& task, const std::string& url) { return task_view(req, task, url); });
}

// The node a task ran on, and its directory there, by URL under the account's URL as this
// request addressed it.
json BatchApi::task_view(const httplib::Request& req, const StoredEntity& task, const std::string& url) const {
    json out = view(task, url);
    if (out.contains("nodeInfo") && out["nodeInfo"].is_object()) {
        json& node = out["nodeInfo"];
        const std::string node_url = base_url(req) + "/" + node.value("nodeUrl", "");
        node["nodeUrl"] = node_url;
        if (node.contains("taskRootDirectory")) node["taskRootDirectoryUrl"] = node_url + "/files/" + node.value("taskRootDirectory", "");
    }
    return out;
}

StoredEntity BatchApi::need_task(const BatchAccount& account, const std::string& job_id, const std::string& task_id) const {
    need_job(account, job_id);
    std::optional<StoredEntity> task = store_.get(account.name, tasks_of(job_id), task_id);
    if (!task) throw task_not_found();
    return *task;
}

// Its constraints (maxWallClockTime, retentionTime, maxTaskRetryCount); what the body leaves
// out stays as it was.
void BatchApi::update_task(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    const std::string job_id = req.matches[1], task_id = req.matches[2];
    need_job(account, job_id);
    json body = parse_body(req);
    check_task_change(body);
    refuse_unknown_properties(body, "TaskUpdateParameter");
    if (has_conditions(req)) check_conditions(req, need_task(account, job_id, task_id));
    std::optional<StoredEntity> task = store_.update(account.name, tasks_of(job_id), task_id, [&](json& doc) {
        const json constraints = body.value("constraints", json::object());
        for (const auto& [name, value] : constraints.items()) doc["constraints"][name] = value;
        return true;
    });
    if (!task) throw task_not_found();
    nodes_.task_changed(account.name, job_id, task_id);
    set_entity_headers(res, *task);
    res.set_header("DataServiceId", base_url(req) + "/jobs/" + job_id + "/tasks/" + task_id);
}

void BatchApi::delete_task(const BatchAccount& account, const httplib::Request& req, httplib::Response&) {
    const std::string job_id = req.matches[1], task_id = req.matches[2];
    check_conditions(req, need_task(account, job_id, task_id));
    nodes_.delete_task(account.name, job_id, task_id);
}

void BatchApi::terminate_task(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    const std::string job_id = req.matches[1], task_id = req.matches[2];
    check_conditions(req, need_task(account, job_id, task_id));
    nodes_.terminate_task(account.name, job_id, task_id);
    res.status = 204;
}

// A task that failed goes back to active with its retry count at 0 (its exit code and failure
// gone), to run again; one not completed or that succeeded is refused (409 TaskNotCompleted,
// TaskCompletedSuccessfully: names chosen here), as is one of a job past changing.
void BatchApi::reactivate_task(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    const std::string job_id = req.matches[1], task_id = req.matches[2];
    StoredEntity job = need_job(account, job_id);
    check_conditions(req, need_task(account, job_id, task_id));
    need_job_changeable(job.body);
    const std::string now = time::format_iso8601(time::now());
    std::optional<StoredEntity> task = store_.update(account.name, tasks_of(job_id), task_id, [&](json& doc) {
        if (doc.value("state", "") != "completed") throw BatchError(409, "TaskNotCompleted", "The specified task is not completed.");
        json& info = doc["executionInfo"];
        if (info.value("result", "") == "success") {
            throw BatchError(409, "TaskCompletedSuccessfully", "The specified task completed successfully: it cannot be reactivated.");
        }
        move_state(doc, "active", now);
        for (const char* gone : {"exitCode", "failureInfo", "result", "startTime", "endTime"}) info.erase(gone);
        info["retryCount"] = 0;
        doc.erase("nodeInfo");
        return true;
    });
    if (!task) throw task_not_found();
    nodes_.task_added(account.name, pool_of_job(job.body), job_id, task->body);
    set_entity_headers(res, *task);
    res.status = 204;
}

void BatchApi::list_task_files(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    const std::string job_id = req.matches[1], task_id = req.matches[2];
    StoredEntity task = need_task(account, job_id, task_id);
    send_file_list(req, res, task.body.value("_root", ""), base_url(req) + "/jobs/" + job_id + "/tasks/" + task_id + "/files",
                   base_url(req) + "/$metadata#files");
}

// A file of the task's directory on the node it last ran on (stdout.txt, stderr.txt, wd/...);
// gone with the node, or after its retentionTime.
void BatchApi::get_task_file(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    const std::string job_id = req.matches[1], task_id = req.matches[2], path = req.matches[3];
    StoredEntity task = need_task(account, job_id, task_id);
    send_file_under(req, res, task.body.value("_root", ""), path, base_url(req) + "/jobs/" + job_id + "/tasks/" + task_id + "/files/" + path);
}

void BatchApi::delete_task_file(const BatchAccount& account, const httplib::Request& req, httplib::Response&) {
    StoredEntity task = need_task(account, req.matches[1], req.matches[2]);
    delete_file_under(req, task.body.value("_root", ""), req.matches[3]);
}

}  // namespace bai::batch
