#include "emulator/arm/batchai_view.h"

#include "common/time/timestamps.h"
#include "emulator/arm/resource_view.h"
#include "emulator/validation/vm_sizes.h"

namespace bai::arm {
namespace {

using nlohmann::json;

// Node hours: nodeCount times the hours between the run's start and end. The service answered
// 0.0 while the job ran (recorded) and the whole run's hours once it had ended.
double node_hours(const json& properties) {
    const json& info = properties["executionInfo"];
    if (!info.contains("startTime") || !info.contains("endTime") || !info["startTime"].is_string() ||
        !info["endTime"].is_string()) {
        return 0.0;
    }
    std::optional<time::TimePoint> start = time::parse_iso8601(info["startTime"].get<std::string>());
    std::optional<time::TimePoint> end = time::parse_iso8601(info["endTime"].get<std::string>());
    if (!start || !end || *end < *start) return 0.0;
    const double hours = std::chrono::duration<double, std::ratio<3600>>(*end - *start).count();
    const json& nodes = properties.value("nodeCount", json(1));
    return hours * (nodes.is_number() ? nodes.get<double>() : 1.0);
}

}  // namespace

json workspace_view(const StoredResource& stored) {
    json v = redacted(stored.body);
    v["etag"] = stored.etag;
    return v;
}

json cluster_view(const StoredResource& stored) {
    json v = redacted(stored.body);
    v["etag"] = stored.etag;
    json& p = v["properties"];
    if (p.contains("virtualMachineConfiguration") && p["virtualMachineConfiguration"].is_object()) {
        json& vm = p["virtualMachineConfiguration"];
        if (vm.contains("imageReference") && vm["imageReference"].is_object() && !vm["imageReference"].contains("minVersion")) {
            vm["imageReference"]["minVersion"] = "";
        }
    }
    return v;
}

json job_view(const StoredResource& stored) {
    json v = redacted(stored.body);
    json& p = v["properties"];
    // The service placed a job on its cluster's nodes when it left the queue: only then did it
    // answer the size and cores it ran on (a job that ended while queued shows them too, a choice).
    const bool placed = p.value("executionState", "queued") != "queued";
    const std::string size = stored.body.value(kJobVmSize, "");
    std::optional<validation::VmSize> vm = validation::find_vm_size(size);
    p["coreCountPerNode"] = placed && vm ? vm->cores : 0;
    if (placed && !size.empty()) p["vmSize"] = size;
    if (p.contains("executionInfo") && p["executionInfo"].is_object()) {
        p["executionInfo"]["totalJobNodeHours"] = node_hours(p);
    }
    return v;
}

}  // namespace bai::arm
