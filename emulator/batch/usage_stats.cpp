#include "emulator/batch/usage_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "emulator/validation/vm_sizes.h"

namespace bai::batch {

using nlohmann::json;

namespace {

// A duration as the service writes one (.NET's TimeSpan in XML: P1DT2H3M4.5S, PT0S).
std::string iso_duration(double seconds) {
    if (!(seconds > 0)) return "PT0S";
    const auto whole = static_cast<long long>(seconds);
    const long long days = whole / 86400, hours = whole % 86400 / 3600, minutes = whole % 3600 / 60;
    const double rest = seconds - static_cast<double>(whole - whole % 60);
    // Written with snprintf: GCC 12 warns of a restrict overlap in short concatenations that
    // has none.
    char text[96];
    int at = std::snprintf(text, sizeof text, "P");
    if (days) at += std::snprintf(text + at, sizeof text - static_cast<size_t>(at), "%lldD", days);
    at += std::snprintf(text + at, sizeof text - static_cast<size_t>(at), "T");
    if (hours) at += std::snprintf(text + at, sizeof text - static_cast<size_t>(at), "%lldH", hours);
    if (minutes) at += std::snprintf(text + at, sizeof text - static_cast<size_t>(at), "%lldM", minutes);
    if (rest > 0 || (!hours && !minutes)) at += std::snprintf(text + at, sizeof text - static_cast<size_t>(at), "%.7gS", rest);
    std::string out(text);
    if (out.back() == 'T') out.pop_back();
    return out;
}

double seconds_between(const std::string& from, const std::string& to) {
    std::optional<time::TimePoint> a = time::parse_iso8601(from), b = time::parse_iso8601(to);
    if (!a || !b || *b < *a) return 0;
    return std::chrono::duration<double>(*b - *a).count();
}

int cores_of(const std::string& vm_size) {
    std::optional<validation::VmSize> size = validation::find_vm_size(vm_size);
    return size ? std::max(1, size->cores) : 1;  // the cloud services' small and the like: one core
}

double overlap_seconds(const NodeSession& s, time::TimePoint from, time::TimePoint to) {
    const time::TimePoint start = std::max(s.start, from), end = std::min(s.end, to);
    return end > start ? std::chrono::duration<double>(end - start).count() : 0.0;
}

// The record's form of the totals (its "retired").
json json_of(const TaskTotals& t) {
    return {{"succeeded", t.succeeded}, {"failed", t.failed}, {"retries", t.retries}, {"wallSeconds", t.wall_seconds},
            {"waitSeconds", t.wait_seconds}};
}

}  // namespace

json new_usage_record(time::TimePoint now) {
    return {{"id", kUsage}, {"startTime", time::format_iso8601(now)}, {"sessions", json::array()},
            {"retired", json_of(TaskTotals{})}};
}

void record_session(json& record, const NodeSession& s) {
    json& sessions = record["sessions"];
    if (!sessions.is_array()) sessions = json::array();
    sessions.push_back({{"poolId", s.pool_id}, {"vmSize", s.vm_size}, {"dedicated", s.dedicated},
                        {"start", time::to_ticks(s.start)}, {"end", time::to_ticks(s.end)}});
    if (sessions.size() <= kMaxSessions) return;
    const auto dropped = static_cast<long>(sessions.size() - kMaxSessions);
    double core_seconds = record.value("droppedCoreSeconds", 0.0);
    for (const NodeSession& old : sessions_of({{"sessions", json(sessions.begin(), sessions.begin() + dropped)}})) {
        if (old.dedicated) core_seconds += std::chrono::duration<double>(old.end - old.start).count() * cores_of(old.vm_size);
    }
    record["droppedCoreSeconds"] = core_seconds;
    sessions.erase(sessions.begin(), sessions.begin() + dropped);
}

std::vector<NodeSession> sessions_of(const json& record) {
    std::vector<NodeSession> out;
    for (const json& s : record.value("sessions", json::array())) {
        out.push_back({s.value("poolId", ""), s.value("vmSize", ""), s.value("dedicated", true),
                       time::from_ticks(s.value("start", std::int64_t{0})), time::from_ticks(s.value("end", std::int64_t{0}))});
    }
    return out;
}

void TaskTotals::add(const json& task) {
    if (!task.is_object()) return;
    const json info = task.value("executionInfo", json::object());
    if (!info.is_object()) return;
    if (auto count = info.find("retryCount"); count != info.end() && count->is_number_integer()) retries += count->get<long long>();
    if (task.value("state", "") != "completed") return;
    (info.value("result", "") == "success" ? succeeded : failed) += 1;
    wall_seconds += seconds_between(info.value("startTime", ""), info.value("endTime", ""));
    wait_seconds += seconds_between(task.value("creationTime", ""), info.value("startTime", ""));
}

TaskTotals TaskTotals::of(const std::vector<json>& tasks) {
    TaskTotals totals;
    for (const json& task : tasks) totals.add(task);
    return totals;
}

void retire_tasks(json& record, const TaskTotals& add) {
    json& retired = record["retired"];
    if (!retired.is_object()) retired = json_of(TaskTotals{});
    retired["succeeded"] = retired.value("succeeded", 0LL) + add.succeeded;
    retired["failed"] = retired.value("failed", 0LL) + add.failed;
    retired["retries"] = retired.value("retries", 0LL) + add.retries;
    retired["wallSeconds"] = retired.value("wallSeconds", 0.0) + add.wall_seconds;
    retired["waitSeconds"] = retired.value("waitSeconds", 0.0) + add.wait_seconds;
}

json job_statistics(const TaskTotals& tasks, const json& record, const std::string& url, time::TimePoint now) {
    const json totals = json_of(tasks);
    const json retired = record.value("retired", json::object());
    // Int64s are strings in OData's JSON, as the service writes them.
    auto count = [&](const char* name) { return std::to_string(totals[name].get<long long>() + retired.value(name, 0LL)); };
    auto sum = [&](const char* name) { return totals[name].get<double>() + retired.value(name, 0.0); };
    return {{"url", url},
            {"startTime", record.value("startTime", time::format_iso8601(now))},
            {"lastUpdateTime", time::format_iso8601(now)},
            {"userCPUTime", "PT0S"},
            {"kernelCPUTime", "PT0S"},
            {"wallClockTime", iso_duration(sum("wallSeconds"))},
            {"readIOps", "0"},
            {"writeIOps", "0"},
            {"readIOGiB", 0.0},
            {"writeIOGiB", 0.0},
            {"numTaskRetries", count("retries")},
            {"numSucceededTasks", count("succeeded")},
            {"numFailedTasks", count("failed")},
            {"waitTime", iso_duration(sum("waitSeconds"))}};
}

json pool_statistics(const std::vector<NodeSession>& sessions, const json& record, const std::string& url, time::TimePoint now) {
    double core_seconds = record.value("droppedCoreSeconds", 0.0);
    for (const NodeSession& s : sessions) {
        if (s.dedicated) core_seconds += std::chrono::duration<double>(s.end - s.start).count() * cores_of(s.vm_size);
    }
    const std::string start = record.value("startTime", time::format_iso8601(now)), updated = time::format_iso8601(now);
    return {{"url", url},
            {"usageStats", {{"startTime", start}, {"lastUpdateTime", updated}, {"dedicatedCoreTime", iso_duration(core_seconds)}}},
            {"resourceStats",
             {{"startTime", start}, {"lastUpdateTime", updated}, {"diskReadIOps", "0"}, {"diskWriteIOps", "0"},
              {"avgCPUPercentage", 0.0}, {"avgMemoryGiB", 0.0}, {"peakMemoryGiB", 0.0}, {"avgDiskGiB", 0.0}, {"peakDiskGiB", 0.0},
              {"diskReadGiB", 0.0}, {"diskWriteGiB", 0.0}, {"networkReadGiB", 0.0}, {"networkWriteGiB", 0.0}}}};
}

std::pair<time::TimePoint, time::TimePoint> last_usage_interval(time::TimePoint now) {
    const auto since_epoch = std::chrono::duration_cast<std::chrono::minutes>(now.time_since_epoch());
    const time::TimePoint current(std::chrono::duration_cast<time::TimePoint::duration>(since_epoch - since_epoch % kUsageInterval));
    return {current - kUsageInterval, current};
}

json pool_usage_metrics(const std::vector<NodeSession>& sessions, time::TimePoint from, time::TimePoint to) {
    const time::TimePoint first = last_usage_interval(from + kUsageInterval).first;  // `from` rounded down
    json out = json::array();
    std::map<std::string, std::vector<const NodeSession*>> by_pool;
    for (const NodeSession& s : sessions) by_pool[s.pool_id].push_back(&s);
    for (const auto& [pool_id, pool_sessions] : by_pool) {
        for (time::TimePoint start = first; start < to; start += kUsageInterval) {
            const time::TimePoint end = start + kUsageInterval;
            double core_hours = 0;
            for (const NodeSession* s : pool_sessions) core_hours += overlap_seconds(*s, start, end) * cores_of(s->vm_size) / 3600.0;
            if (core_hours <= 0) continue;
            out.push_back({{"poolId", pool_id},
                           {"startTime", time::format_iso8601(start)},
                           {"endTime", time::format_iso8601(end)},
                           {"vmSize", pool_sessions.back()->vm_size},
                           {"totalCoreHours", std::round(core_hours * 1e6) / 1e6}});
        }
    }
    return out;
}

}  // namespace bai::batch
