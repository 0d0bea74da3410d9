#include "emulator/engine/engine_history.h"

namespace bai::engine {
namespace {

nlohmann::json to_json(const HistoryEvent& e) {
    nlohmann::json out{{"time", e.time}, {"event", e.event}};
    if (!e.node.empty()) out["node"] = e.node;
    if (!e.job_id.empty()) out["jobId"] = e.job_id;
    if (!e.detail.empty()) out["detail"] = e.detail;
    return out;
}

}  // namespace

void EngineHistory::record(HistoryEvent event) {
    std::lock_guard guard(mutex_);
    if (events_.size() >= capacity_) events_.pop_front();
    events_.push_back(std::move(event));
}

nlohmann::json EngineHistory::of_cluster(const std::string& cluster_key, size_t most) const {
    std::vector<HistoryEvent> found;
    {
        std::lock_guard guard(mutex_);
        for (auto it = events_.rbegin(); it != events_.rend() && found.size() < most; ++it) {
            if (it->cluster_key == cluster_key && !it->node.empty()) found.push_back(*it);
        }
    }
    nlohmann::json out = nlohmann::json::array();
    for (auto it = found.rbegin(); it != found.rend(); ++it) out.push_back(to_json(*it));
    return out;
}

nlohmann::json EngineHistory::of_job(const std::string& job_key) const {
    nlohmann::json out = nlohmann::json::array();
    std::lock_guard guard(mutex_);
    for (const HistoryEvent& e : events_) {
        if (e.job_key == job_key && e.node.empty()) out.push_back(to_json(e));
    }
    return out;
}

}  // namespace bai::engine
