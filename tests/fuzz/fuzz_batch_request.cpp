// libFuzzer: the Batch endpoint's parsers. The input's first line is the target, then "Name:
// value" headers up to an empty line, then a body: the SharedKey canonicalization and check of
// the request (the account taken off the path, SharedKey or a bearer token checked as
// --strict-auth does), the body as an auto-scale formula (with and without a metric history), and the
// pool, job, task and certificate rules of the body as JSON, with the task and job documents' changes as they
// end; the body as a list's $filter and $select too. Only BatchError (and the filter's
// std::invalid_argument) may come out.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "emulator/batch/autoscale_formula.h"
#include "emulator/batch/batch_account.h"
#include "emulator/batch/batch_auth.h"
#include "emulator/batch/batch_error.h"
#include "emulator/batch/batch_shared_key.h"
#include "emulator/batch/body_properties.h"
#include "emulator/batch/certificate_rules.h"
#include "common/odata/filter.h"
#include "emulator/batch/odata_query.h"
#include "emulator/batch/pool_rules.h"
#include "emulator/batch/schedule_rules.h"
#include "emulator/batch/task_states.h"
#include "emulator/batch/work_rules.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view input(reinterpret_cast<const char*>(data), size);
    httplib::Request http;
    http.method = "POST";
    bool first = true;
    while (!input.empty()) {
        size_t end = input.find('\n');
        std::string_view line = input.substr(0, end);
        input = end == std::string_view::npos ? std::string_view() : input.substr(end + 1);
        if (first) {
            http.target = std::string(line);
            first = false;
        } else if (line.empty()) {
            break;
        } else if (size_t colon = line.find(':'); colon != std::string_view::npos) {
            http.headers.emplace(std::string(line.substr(0, colon)), std::string(line.substr(colon + 1)));
        }
    }
    http.body = std::string(input);
    static const bai::batch::BatchAccountRegistry accounts(bai::batch::batch_accounts({}));
    static const bai::identity::TokenService tokens = [] {
        char dir[] = "/tmp/fuzz-batch-key-XXXXXX";
        if (::mkdtemp(dir) == nullptr) std::abort();
        bai::identity::SigningKey key = bai::identity::load_or_create_signing_key(dir);
        std::filesystem::remove_all(dir);
        return bai::identity::TokenService(std::move(key), bai::identity::ServicePrincipals({}));
    }();
    http.path = http.target.substr(0, http.target.find('?'));
    bai::batch::take_account_from_path(http, accounts);
    for (const bai::identity::TokenService* strict : {static_cast<const bai::identity::TokenService*>(nullptr), &tokens}) {
        try {
            (void)bai::batch::batch_string_to_sign(http, "devbatchaccount1");
            bai::batch::authenticate(http, accounts, strict);
        } catch (const bai::batch::BatchError&) {
        }
    }
    // The body as an auto-scale formula too.
    (void)bai::batch::evaluate_autoscale(http.body, bai::batch::metrics_at(1));
    static const std::deque<bai::batch::MetricSample> history = [] {
        std::deque<bai::batch::MetricSample> samples;
        for (int i = 1; i <= 8; ++i) samples.push_back({1000.0 - 30.0 * i, bai::batch::metrics_at(i).metrics});
        return samples;
    }();
    static const bai::batch::AutoScaleInputs with_history = [] {
        bai::batch::AutoScaleInputs in = bai::batch::metrics_at(2);
        in.lenient_samples = false;
        in.history = &history;
        in.now = 1000;
        return in;
    }();
    (void)bai::batch::evaluate_autoscale(http.body, with_history);
    // The body as a list's $filter and $select, matched against a task document.
    try {
        static const nlohmann::json task = nlohmann::json::parse(
            R"({"id":"t","state":"completed","executionInfo":{"exitCode":1,"endTime":"2026-01-01T00:00:00Z"}})");
        (void)bai::odata::Filter::parse(http.body, bai::odata::Case::sensitive).matches(task);
        (void)bai::odata::Filter::parse(http.body, bai::odata::Case::insensitive).matches(task);
    } catch (const std::invalid_argument&) {
    }
    try {
        (void)bai::batch::parse_select(http.body);
    } catch (const std::invalid_argument&) {
    }
    nlohmann::json body = nlohmann::json::parse(http.body, nullptr, false);
    if (!body.is_discarded()) {
        const std::string now = "2018-05-01T00:00:00.000Z";
        try {
            bai::batch::check_pool_to_add(body);
            // A network that exists with one subnet, "default".
            bai::batch::check_pool_network(body, [](const std::string&) {
                return std::optional<nlohmann::json>({{"properties", {{"subnets", {{{"name", "default"}}}}}}});
            });
            (void)bai::batch::new_pool_document(body, now);
        } catch (const bai::batch::BatchError&) {
        }
        try {
            (void)bai::batch::new_certificate_document(body, now);
        } catch (const bai::batch::BatchError&) {
        }
        try {
            bai::batch::check_job_to_add(body);
            nlohmann::json job = bai::batch::new_job_document(body, now);
            bai::batch::check_job_change(body, job, true);
            bai::batch::apply_job_change(job, body, true);
        } catch (const bai::batch::BatchError&) {
        }
        try {
            bai::batch::check_task_to_add(body);
            nlohmann::json task = bai::batch::new_task_document(body, {{"constraints", nlohmann::json::object()}}, now);
            (void)bai::batch::limit_of(task["constraints"], "maxWallClockTime");
            (void)bai::batch::end_run(task, 3, nullptr, now);
            task["executionInfo"]["exitCode"] = 3;
            (void)bai::batch::job_action_after(task, {{"onTaskFailure", "performexitoptionsjobaction"}});
            (void)bai::batch::count_tasks({task});
        } catch (const bai::batch::BatchError&) {
        }
        // The body against the service's types.
        for (const char* type : {"PoolAddParameter", "JobAddParameter", "TaskAddParameter", "JobScheduleAddParameter"}) {
            (void)bai::batch::unknown_property(body, type);
        }
        // A job schedule: added, its plan over a week, changed by the body again.
        try {
            bai::batch::check_schedule_to_add(body);
            nlohmann::json schedule = bai::batch::new_schedule_document(body, now);
            bai::time::TimePoint at = *bai::time::parse_iso8601(now);
            bai::batch::place_schedule(schedule, at);
            for (int hour = 0; hour < 24 * 7; hour += 7) {
                const bai::time::TimePoint t = at + std::chrono::hours(hour);
                const bai::batch::SchedulePlan plan = bai::batch::plan_schedule(schedule, t, hour % 3 == 0);
                bai::batch::advance_schedule(schedule, t, plan.make_job);
                (void)bai::batch::schedule_job_body(schedule, hour);
            }
            bai::batch::check_schedule_change(body, false);
            bai::batch::apply_schedule_change(schedule, body, false);
            bai::batch::place_schedule(schedule, at);
        } catch (const bai::batch::BatchError&) {
        }
    }
    return 0;
}
