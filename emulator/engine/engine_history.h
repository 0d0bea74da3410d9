// What the job engine's nodes and jobs lived through since the emulator started, for the portal:
// a node joined, became idle or unusable, ran a job (from when to when, and how it ended), was
// pre-empted or failed, left; a job was queued, ran on its nodes, was requeued, ended. Kept in
// memory and bounded (the oldest events go first); the documents keep their own times across a
// restart, this does not.
#pragma once

#include <cstddef>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

namespace bai::engine {

struct HistoryEvent {
    std::string time;         // ISO 8601, from the engine's clock (virtual in a replay)
    std::string cluster_key;  // the cluster's resource key
    std::string node;         // empty for a job's own events (queued)
    std::string job_key;      // empty for a node's own events
    std::string job_id;       // the job's ARM id as written
    std::string event;        // joins, idle, unusable, leaves, preempted, fails, queued, runs, ends
    std::string detail;       // why a node left, how a job ended ("succeeded", "requeued: preempted", ...)
};

class EngineHistory {
public:
    explicit EngineHistory(size_t capacity = 50000) : capacity_(capacity) {}

    void record(HistoryEvent event);
    // The newest `most` events of a cluster's nodes and jobs, oldest first:
    // [{time, node, jobId, event, detail}].
    nlohmann::json of_cluster(const std::string& cluster_key, size_t most = 2000) const;
    // A job's own events (those with no node: queued, runs on N nodes, requeued, ends), oldest first.
    nlohmann::json of_job(const std::string& job_key) const;

private:
    mutable std::mutex mutex_;
    std::deque<HistoryEvent> events_;
    size_t capacity_;
};

}  // namespace bai::engine
