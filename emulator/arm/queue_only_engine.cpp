#include "emulator/arm/queue_only_engine.h"

#include "common/time/timestamps.h"
#include "emulator/arm/job_execution.h"
#include "emulator/arm/resource_view.h"

namespace bai::arm {

void QueueOnlyEngine::job_terminate(const std::string& job_id) {
    store_.update(job_id, [](nlohmann::json& job) {
        std::string state = job["properties"].value("executionState", "queued");
        if (state != "queued" && state != "running" && state != "terminating") return false;
        end_execution(job, "failed", std::nullopt, nlohmann::json::array({job_terminated_error()}), arm_time(time::now()));
        return true;
    });
}

}  // namespace bai::arm
