// The Batch API's account statistics: the lifetime statistics of all jobs and of all pools, and
// the pools' usage metrics by aggregation interval (usage_stats.h computes them).
#include "common/text/ascii.h"
#include "emulator/batch/batch_api.h"
#include "emulator/batch/batch_error.h"
#include "emulator/batch/batch_http.h"
#include "emulator/batch/usage_stats.h"

namespace bai::batch {

using nlohmann::json;

namespace {

// The starttime or endtime query parameter, when given; BatchError 400 naming it otherwise.
std::optional<time::TimePoint> time_param(const httplib::Request& req, const char* name) {
    if (!req.has_param(name)) return std::nullopt;
    std::optional<time::TimePoint> t = time::parse_iso8601(req.get_param_value(name));
    if (!t) {
        throw BatchError(400, "InvalidQueryParameterValue", "The value for one of the query parameters specified in the request URI is invalid.",
                         {{"QueryParameterName", name}, {"QueryParameterValue", req.get_param_value(name)},
                          {"Reason", "The value is a date and time such as 2030-01-01T00:00:00Z"}});
    }
    return t;
}

}  // namespace

void BatchApi::serve_usage(http::Routes& server) {
    route(server, "GET", "/lifetimejobstats", [this](auto& a, auto& q, auto& r) {
        TaskTotals tasks;
        for (const StoredEntity& job : store_.in_scope(a.name, kJobs)) {
            store_.for_each_in_scope(a.name, tasks_of(job.body.value("id", "")), [&](StoredEntity& task) { tasks.add(task.body); });
        }
        json out = job_statistics(tasks, nodes_.usage_record(a.name), base_url(q) + "/lifetimejobstats", nodes_.now());
        out["odata.metadata"] = base_url(q) + "/$metadata#jobstats/@Element";
        r.set_content(out.dump(), "application/json;odata=minimalmetadata");
    });
    route(server, "GET", "/lifetimepoolstats", [this](auto& a, auto& q, auto& r) {
        json out = pool_statistics(nodes_.node_sessions(a.name), nodes_.usage_record(a.name), base_url(q) + "/lifetimepoolstats",
                                   nodes_.now());
        out["odata.metadata"] = base_url(q) + "/$metadata#poolstats/@Element";
        r.set_content(out.dump(), "application/json;odata=minimalmetadata");
    });
    // Without starttime and endtime, the last whole interval; $filter over the metrics (poolId).
    route(server, "GET", "/poolusagemetrics", [this](auto& a, auto& q, auto& r) {
        const auto [last_start, last_end] = last_usage_interval(nodes_.now());
        const time::TimePoint from = time_param(q, "starttime").value_or(last_start);
        const time::TimePoint to = time_param(q, "endtime").value_or(q.has_param("starttime") ? nodes_.now() : last_end);
        json metrics = pool_usage_metrics(nodes_.node_sessions(a.name), from, to);
        send_computed_list(q, r, metrics, base_url(q) + "/$metadata#poolusagemetrics");
    });
}

}  // namespace bai::batch
