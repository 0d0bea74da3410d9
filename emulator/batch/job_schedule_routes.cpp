// The Batch API's job schedules: add, list, get, exists, patch, update, disable, enable,
// terminate, delete, and the jobs a schedule made. What a schedule does is job_schedules.cpp's.
#include "common/text/ascii.h"
#include "common/time/timestamps.h"
#include "emulator/batch/batch_api.h"
#include "emulator/batch/batch_error.h"
#include "emulator/batch/body_properties.h"
#include "emulator/batch/batch_http.h"
#include "emulator/batch/odata_query.h"
#include "emulator/batch/pool_rules.h"
#include "emulator/batch/schedule_rules.h"
#include "emulator/batch/task_states.h"

namespace bai::batch {

using nlohmann::json;

namespace {

BatchError schedule_not_found() { return BatchError(404, "JobScheduleNotFound", "The specified job schedule does not exist."); }

bool move_schedule(json& doc, const std::string& to) {
    move_state(doc, to, time::now_iso8601());
    return true;
}

}  // namespace

void BatchApi::serve_job_schedules(http::Routes& server) {
    route(server, "POST", "/jobschedules", [this](auto& a, auto& q, auto& r) { add_job_schedule(a, q, r); });
    route(server, "GET", "/jobschedules", [this](auto& a, auto& q, auto& r) {
        send_list(a, q, r, kJobSchedules, "/jobschedules", "jobschedules",
                  [this, &q](const StoredEntity& e, const std::string& url) { return schedule_view(q, e, url); });
    });
    // httplib hands HEAD (the SDK's exists) to the GET route.
    route(server, "GET", R"(/jobschedules/([^/]+))", [this](auto& a, auto& q, auto& r) { get_job_schedule(a, q, r); });
    route(server, "PATCH", R"(/jobschedules/([^/]+))", [this](auto& a, auto& q, auto& r) { change_job_schedule(a, q, r, false); });
    route(server, "PUT", R"(/jobschedules/([^/]+))", [this](auto& a, auto& q, auto& r) { change_job_schedule(a, q, r, true); });
    route(server, "DELETE", R"(/jobschedules/([^/]+))", [this](auto& a, auto& q, auto& r) { delete_job_schedule(a, q, r); });
    route(server, "POST", R"(/jobschedules/([^/]+)/(disable|enable|terminate))",
          [this](auto& a, auto& q, auto& r) { move_job_schedule_state(a, q, r); });
    route(server, "GET", R"(/jobschedules/([^/]+)/jobs)", [this](auto& a, auto& q, auto& r) { list_schedule_jobs(a, q, r); });
}

StoredEntity BatchApi::need_job_schedule(const BatchAccount& account, const std::string& id) const {
    std::optional<StoredEntity> schedule = store_.get(account.name, kJobSchedules, id);
    if (!schedule) throw schedule_not_found();
    return *schedule;
}

json BatchApi::schedule_view(const httplib::Request& req, const StoredEntity& schedule, const std::string& url) const {
    json out = view(schedule, url);
    json& recent = out["executionInfo"]["recentJob"];
    if (recent.is_object() && recent.contains("id")) {
        recent["url"] = base_url(req) + "/jobs/" + recent["id"].get<std::string>();
    } else {
        out["executionInfo"].erase("recentJob");
    }
    return out;
}

void BatchApi::add_job_schedule(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    json body = parse_body(req);
    check_schedule_to_add(body);
    refuse_unknown_properties(body, "JobScheduleAddParameter");
    const json auto_pool = body["jobSpecification"]["poolInfo"].value("autoPoolSpecification", json());
    if (auto_pool.is_object()) {
        check_pool_network(auto_pool["pool"], [this](const std::string& id) { return store_.arm_document(id); });
    }
    if (!store_.add(account.name, kJobSchedules, new_schedule_document(body, time::now_iso8601()))) {
        throw BatchError(409, "JobScheduleExists", "The specified job schedule already exists.");
    }
    nodes_.schedule_changed(account.name, body["id"]);
    send_created(res, need_job_schedule(account, body["id"]), base_url(req) + "/jobschedules/" + body["id"].get<std::string>());
}

void BatchApi::get_job_schedule(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    std::optional<StoredEntity> schedule = store_.get(account.name, kJobSchedules, req.matches[1]);
    if (schedule && answered_not_modified(req, res, *schedule)) return;
    if (req.method == "HEAD") {
        res.status = schedule ? 200 : 404;
        if (schedule) set_entity_headers(res, *schedule);
        return;
    }
    if (!schedule) throw schedule_not_found();
    json out = schedule_view(req, *schedule, base_url(req) + "/jobschedules/" + schedule->body.value("id", ""));
    if (std::optional<std::vector<std::string>> fields = select_of(req)) out = select_fields(out, *fields);
    out["odata.metadata"] = base_url(req) + "/$metadata#jobschedules/@Element";
    set_entity_headers(res, *schedule);
    res.set_content(out.dump(), "application/json;odata=minimalmetadata");
}

// PATCH (`replace` false) or PUT (true); the jobs made from now on see the change.
void BatchApi::change_job_schedule(const BatchAccount& account, const httplib::Request& req, httplib::Response& res, bool replace) {
    const std::string id = req.matches[1];
    json body = parse_body(req);
    check_schedule_change(body, replace);
    refuse_unknown_properties(body, replace ? "JobScheduleUpdateParameter" : "JobSchedulePatchParameter");
    if (has_conditions(req)) check_conditions(req, need_job_schedule(account, id));
    const json spec = body.value("jobSpecification", json::object());
    if (spec.contains("poolInfo") && spec["poolInfo"].contains("autoPoolSpecification")) {
        check_pool_network(spec["poolInfo"]["autoPoolSpecification"]["pool"], [this](const std::string& arm_id) { return store_.arm_document(arm_id); });
    }
    std::optional<StoredEntity> schedule = store_.update(account.name, kJobSchedules, id, [&](json& doc) {
        need_schedule_changeable(doc);
        apply_schedule_change(doc, body, replace);
        return true;
    });
    if (!schedule) throw schedule_not_found();
    nodes_.schedule_changed(account.name, id);
    set_entity_headers(res, *schedule);
    res.set_header("DataServiceId", base_url(req) + "/jobschedules/" + id);
}

// disable (no new jobs; the active one runs on), enable, terminate (the active job too).
void BatchApi::move_job_schedule_state(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    const std::string id = req.matches[1], action = req.matches[2];
    if (has_conditions(req)) check_conditions(req, need_job_schedule(account, id));
    std::optional<StoredEntity> schedule = store_.update(account.name, kJobSchedules, id, [&](json& doc) {
        need_schedule_changeable(doc);
        const std::string state = doc.value("state", "");
        if (action == "enable") return state == "disabled" && move_schedule(doc, "active");
        if (action == "disable") {
            if (state == "disabled") throw BatchError(409, "JobScheduleDisabled", "The specified job schedule is already disabled.");
            return move_schedule(doc, "disabled");
        }
        return move_schedule(doc, "terminating");
    });
    if (!schedule) throw schedule_not_found();
    if (action == "terminate") {
        nodes_.schedule_terminating(account.name, id);
    } else {
        nodes_.schedule_changed(account.name, id);
    }
    set_entity_headers(res, *schedule);
    res.status = action == "terminate" ? 202 : 204;
}

// The schedule is `deleting` while its jobs go; then it is gone.
void BatchApi::delete_job_schedule(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    const std::string id = req.matches[1];
    if (has_conditions(req)) check_conditions(req, need_job_schedule(account, id));
    std::optional<StoredEntity> schedule = store_.update(account.name, kJobSchedules, id, [](json& doc) {
        return doc.value("state", "") != "deleting" && move_schedule(doc, "deleting");
    });
    if (!schedule) throw schedule_not_found();
    nodes_.schedule_deleting(account.name, id);
    res.status = 202;
}

void BatchApi::list_schedule_jobs(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    const std::string id = req.matches[1];
    need_job_schedule(account, id);
    const auto shape = [this, &req](const StoredEntity& job, const std::string&) {
        return view(job, base_url(req) + "/jobs/" + job.body.value("id", ""));
    };
    send_list(account, req, res, kJobs, "/jobschedules/" + id + "/jobs", "jobs", shape, [&id](const StoredEntity& job) {
        return text::iequals(job.body.value("_jobScheduleId", ""), id);
    });
}

}  // namespace bai::batch
