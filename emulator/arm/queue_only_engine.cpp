#include "emulator/arm/queue_only_engine.h"

#include "common/time/timestamps.h"
#include "emulator/arm/resource_view.h"

namespace bai::arm {

void QueueOnlyEngine::job_terminate(const std::string& job_id) {
    store_.update(job_id, [](nlohmann::json& job) {
        nlohmann::json& p = job["properties"];
        std::string state = p.value("executionState", "queued");
        if (state != "queued" && state != "running" && state != "terminating") return false;
        std::string now = arm_time(time::now());
        p["executionState"] = "failed";
        p["executionStateTransitionTime"] = now;
        nlohmann::json& info = p["executionInfo"];
        if (!info.contains("startTime")) info["startTime"] = now;
        info["endTime"] = now;
        info["errors"] = nlohmann::json::array(
            {{{"code", "JobTerminated"}, {"message", "The specified job has been terminated by the user"}}});
        return true;
    });
}

}  // namespace bai::arm
