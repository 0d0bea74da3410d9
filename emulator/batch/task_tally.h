// How many of a job's tasks are in each state, and the task slots they take: what
// GET /jobs/JOB/taskcounts answers and what a job that ends when its tasks are all complete
// asks after each task. Kept up to date as tasks are written (entity_store.h), so that neither
// reads the job's tasks.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>

namespace bai::batch {

struct TaskTally {
    enum Bucket { kActive, kRunning, kCompleted, kSucceeded, kFailed, kBuckets };
    std::array<std::int64_t, kBuckets> tasks{};
    std::array<std::int64_t, kBuckets> slots{};

    // Counts the task document in (sign 1) or out (sign -1): active; running (preparing too);
    // completed, and succeeded or failed by its executionInfo.result; weighted by its
    // requiredSlots for the slots. Never throws, whatever the document holds.
    void count(const nlohmann::json& task, int sign = 1);
    void add(const TaskTally& other);
    std::int64_t total() const { return tasks[kActive] + tasks[kRunning] + tasks[kCompleted]; }
    bool all_completed() const { return total() > 0 && tasks[kCompleted] == total(); }
    bool empty() const { return tasks == decltype(tasks){} && slots == decltype(slots){}; }
    // {"taskCounts": {active, running, completed, succeeded, failed}, "taskSlotCounts": the same}
    nlohmann::json to_json() const;
};

}  // namespace bai::batch
