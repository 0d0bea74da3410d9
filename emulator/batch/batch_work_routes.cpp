// The Batch API's jobs and tasks: add, get, list, delete a job; add (one or a collection), get,
// list a task, and its files (stdout.txt, stderr.txt, wd/...).
#include "common/time/timestamps.h"
#include "emulator/batch/batch_api.h"
#include "emulator/batch/batch_error.h"
#include "emulator/batch/batch_http.h"
#include "emulator/batch/work_rules.h"

namespace bai::batch {

using nlohmann::json;

namespace {

constexpr size_t kMaxTasksPerCollection = 100;

BatchError job_not_found() { return BatchError(404, "JobNotFound", "The specified job does not exist."); }
BatchError task_not_found() { return BatchError(404, "TaskNotFound", "The specified task does not exist."); }

}  // namespace

void BatchApi::serve_work(httplib::Server& server) {
    route(server, "POST", "/jobs", [this](auto& a, auto& q, auto& r) { add_job(a, q, r); });
    route(server, "GET", "/jobs", [this](auto& a, auto& q, auto& r) { list_jobs(a, q, r); });
    route(server, "GET", R"(/jobs/([^/]+))", [this](auto& a, auto& q, auto& r) { get_job(a, q, r); });
    route(server, "DELETE", R"(/jobs/([^/]+))", [this](auto& a, auto& q, auto& r) { delete_job(a, q, r); });
    route(server, "POST", R"(/jobs/([^/]+)/tasks)", [this](auto& a, auto& q, auto& r) { add_task(a, q, r); });
    route(server, "POST", R"(/jobs/([^/]+)/addtaskcollection)", [this](auto& a, auto& q, auto& r) { add_task_collection(a, q, r); });
    route(server, "GET", R"(/jobs/([^/]+)/tasks)", [this](auto& a, auto& q, auto& r) { list_tasks(a, q, r); });
    route(server, "GET", R"(/jobs/([^/]+)/tasks/([^/]+))", [this](auto& a, auto& q, auto& r) { get_task(a, q, r); });
    route(server, "GET", R"(/jobs/([^/]+)/tasks/([^/]+)/files/(.+))", [this](auto& a, auto& q, auto& r) { get_task_file(a, q, r); });
}

StoredEntity BatchApi::need_job(const BatchAccount& account, const std::string& id) const {
    std::optional<StoredEntity> job = store_.get(account.name, kJobs, id);
    if (!job) throw job_not_found();
    return *job;
}

void BatchApi::add_job(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    json body = parse_body(req);
    check_job_to_add(body);
    if (!store_.add(account.name, kJobs, new_job_document(body, time::format_iso8601(time::now())))) {
        throw BatchError(409, "JobExists", "The specified job already exists.");
    }
    send_created(res, need_job(account, body["id"]), base_url_ + "/jobs/" + body["id"].get<std::string>());
}

void BatchApi::get_job(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    StoredEntity job = need_job(account, req.matches[1]);
    json out = view(job, base_url_ + "/jobs/" + job.body.value("id", ""));
    out["odata.metadata"] = base_url_ + "/$metadata#jobs/@Element";
    set_entity_headers(res, job);
    res.set_content(out.dump(), "application/json;odata=minimalmetadata");
}

void BatchApi::list_jobs(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    send_list(account, req, res, kJobs, "/jobs", "jobs");
}

// The job is `deleting` while its running tasks are stopped; then it and its tasks are gone.
void BatchApi::delete_job(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    const std::string id = req.matches[1];
    std::optional<StoredEntity> job = store_.update(account.name, kJobs, id, [](json& doc) {
        if (doc.value("state", "") == "deleting") return false;
        doc["previousState"] = doc["state"];
        doc["state"] = "deleting";
        doc["stateTransitionTime"] = time::format_iso8601(time::now());
        return true;
    });
    if (!job) throw job_not_found();
    nodes_.job_deleting(account.name, id);
    res.status = 202;
}

std::optional<StoredEntity> BatchApi::put_task(const BatchAccount& account, const StoredEntity& job, const json& body) {
    const std::string job_id = job.body.value("id", "");
    if (!store_.add(account.name, tasks_of(job_id), new_task_document(body, job.body, time::format_iso8601(time::now())))) {
        return std::nullopt;
    }
    nodes_.task_added(account.name, job.body["poolInfo"].value("poolId", ""), job_id, body["id"]);
    return store_.get(account.name, tasks_of(job_id), body["id"]);
}

void BatchApi::add_task(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    StoredEntity job = need_job(account, req.matches[1]);
    json body = parse_body(req);
    if (job.body.value("state", "") != "active") {
        throw BatchError(409, "JobNotActive", "The specified job is not in an active state.");
    }
    check_task_to_add(body);
    std::optional<StoredEntity> task = put_task(account, job, body);
    if (!task) throw BatchError(409, "TaskExists", "The specified task already exists.");
    send_created(res, *task, base_url_ + "/jobs/" + job.body.value("id", "") + "/tasks/" + body["id"].get<std::string>());
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
    if (job.body.value("state", "") != "active") throw BatchError(409, "JobNotActive", "The specified job is not in an active state.");
    json results = json::array();
    for (const json& task : body["value"]) {
        json result{{"taskId", task.is_object() ? task.value("id", "") : ""}};
        try {
            check_task_to_add(task);
            std::optional<StoredEntity> added = put_task(account, job, task);
            if (!added) throw BatchError(409, "TaskExists", "The specified task already exists.");
            result["status"] = "success";
            result["eTag"] = added->etag;
            result["lastModified"] = time::format_iso8601(time::from_ticks(added->modified_ticks));
            result["location"] = base_url_ + "/jobs/" + job.body.value("id", "") + "/tasks/" + task.value("id", "");
        } catch (const BatchError& e) {
            json values = json::array();
            for (const auto& [key, value] : e.values) values.push_back({{"key", key}, {"value", value}});
            result["status"] = "clienterror";
            result["error"] = {{"code", e.code}, {"message", {{"lang", "en-US"}, {"value", e.what()}}}, {"values", values}};
        }
        results.push_back(std::move(result));
    }
    json out{{"odata.metadata", base_url_ + "/$metadata#taskaddresult"}, {"value", results}};
    res.set_content(out.dump(), "application/json;odata=minimalmetadata");
}

void BatchApi::get_task(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    const std::string job_id = req.matches[1], task_id = req.matches[2];
    need_job(account, job_id);
    std::optional<StoredEntity> task = store_.get(account.name, tasks_of(job_id), task_id);
    if (!task) throw task_not_found();
    json out = view(*task, base_url_ + "/jobs/" + job_id + "/tasks/" + task->body.value("id", ""));
    out["odata.metadata"] = base_url_ + "/$metadata#tasks/@Element";
    set_entity_headers(res, *task);
    res.set_content(out.dump(), "application/json;odata=minimalmetadata");
}

void BatchApi::list_tasks(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    const std::string job_id = req.matches[1];
    need_job(account, job_id);
    send_list(account, req, res, tasks_of(job_id), "/jobs/" + job_id + "/tasks", "tasks");
}

// A file of the task's directory on the node it last ran on (stdout.txt, stderr.txt, wd/...);
// gone with the node.
void BatchApi::get_task_file(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    const std::string job_id = req.matches[1], task_id = req.matches[2], path = req.matches[3];
    need_job(account, job_id);
    std::optional<StoredEntity> task = store_.get(account.name, tasks_of(job_id), task_id);
    if (!task) throw task_not_found();
    send_file_under(res, task->body.value("_root", ""), path);
}

}  // namespace bai::batch
