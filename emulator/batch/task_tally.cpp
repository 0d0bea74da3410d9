#include "emulator/batch/task_tally.h"

#include <algorithm>
#include "common/text/json_string.h"

namespace bai::batch {
namespace {

using nlohmann::json;

std::int64_t required_slots(const json& task) {
    auto it = task.is_object() ? task.find("requiredSlots") : task.end();
    if (it == task.end() || !it->is_number_integer()) return 1;
    return std::max<std::int64_t>(1, it->get<std::int64_t>());
}

}  // namespace

void TaskTally::count(const json& task, int sign) {
    const std::string state = text::string_member(task, "state");
    const Bucket bucket = state == "completed" ? kCompleted : state == "active" || state.empty() ? kActive : kRunning;
    const std::int64_t weight = required_slots(task);
    tasks[bucket] += sign;
    slots[bucket] += sign * weight;
    if (bucket != kCompleted) return;
    auto info = task.is_object() ? task.find("executionInfo") : task.end();
    const Bucket result = info != task.end() && text::string_member(*info, "result") == "success" ? kSucceeded : kFailed;
    tasks[result] += sign;
    slots[result] += sign * weight;
}

void TaskTally::add(const TaskTally& other) {
    for (int b = 0; b < kBuckets; ++b) {
        tasks[b] += other.tasks[b];
        slots[b] += other.slots[b];
    }
}

json TaskTally::to_json() const {
    static constexpr const char* kNames[kBuckets] = {"active", "running", "completed", "succeeded", "failed"};
    json counts = json::object(), slot_counts = json::object();
    for (int b = 0; b < kBuckets; ++b) {
        counts[kNames[b]] = tasks[b];
        slot_counts[kNames[b]] = slots[b];
    }
    return {{"taskCounts", counts}, {"taskSlotCounts", slot_counts}};
}

}  // namespace bai::batch
