#include "emulator/arm/resource_defaults.h"

#include <algorithm>

#include "common/crypto/random_id.h"
#include "common/time/timestamps.h"
#include "emulator/arm/cloud_error.h"
#include "emulator/arm/resource_view.h"
#include "emulator/arm/text.h"
#include "emulator/validation/duration.h"

namespace bai::arm {
namespace {

using nlohmann::json;

constexpr std::pair<const char*, const char*> kToolTypes[] = {
    {"cntkSettings", "cntk"},         {"tensorFlowSettings", "tensorflow"}, {"caffeSettings", "caffe"},
    {"caffe2Settings", "caffe2"},     {"chainerSettings", "chainer"},       {"horovodSettings", "horovod"},
    {"customMpiSettings", "custommpi"}, {"pyTorchSettings", "pytorch"},      {"customToolkitSettings", "custom"}};

// The toolkits whose processCount defaults to nodeCount.
constexpr const char* kWithProcessCount[] = {"cntkSettings", "caffeSettings", "chainerSettings",
                                             "horovodSettings", "customMpiSettings", "pyTorchSettings"};

void fill_mount_defaults(json& mount_volumes) {
    if (!mount_volumes.is_object() || !mount_volumes.contains("azureFileShares")) return;
    for (json& share : mount_volumes["azureFileShares"]) {
        if (!share.contains("fileMode")) share["fileMode"] = "0777";
        if (!share.contains("directoryMode")) share["directoryMode"] = "0777";
    }
}

}  // namespace

std::string iso_duration(std::chrono::seconds d) {
    long long total = d.count();
    if (total <= 0) return "PT0S";
    long long days = total / 86400, hours = total / 3600 % 24, minutes = total / 60 % 60, seconds = total % 60;
    std::string out = "P";
    if (days) out += std::to_string(days) + "D";
    if (hours || minutes || seconds) out += "T";
    if (hours) out += std::to_string(hours) + "H";
    if (minutes) out += std::to_string(minutes) + "M";
    if (seconds) out += std::to_string(seconds) + "S";
    return out;
}

std::string tool_type(const json& properties) {
    for (const auto& [block, type] : kToolTypes) {
        if (properties.contains(block) && !properties[block].is_null()) return type;
    }
    return "custom";
}

void stamp_new(json& properties, const std::string& provisioning_state) {
    std::string now = arm_time(time::now());
    properties["creationTime"] = now;
    properties["provisioningState"] = provisioning_state;
    properties["provisioningStateTransitionTime"] = now;
}

void set_provisioning_state(json& properties, const std::string& state) {
    properties["provisioningState"] = state;
    properties["provisioningStateTransitionTime"] = arm_time(time::now());
}

void fill_job_defaults(json& p, const std::string& output_segment, Era era) {
    if (!p.contains("schedulingPriority")) p["schedulingPriority"] = "normal";
    json& constraints = p["constraints"];
    if (!constraints.is_object()) constraints = json::object();
    auto limit = constraints.contains("maxWallClockTime")
                     ? validation::parse_duration(constraints["maxWallClockTime"].get<std::string>())
                     : std::nullopt;
    const std::chrono::seconds fallback = era == Era::latest ? std::chrono::hours(24 * 150) : std::chrono::hours(24 * 7);
    const std::chrono::seconds wall = limit.value_or(fallback);
    constraints["maxWallClockTime"] = iso_duration(wall);
    // The service's own fields, never a client's (the flat API stores what it was sent).
    p.erase("maxJobDurationSeconds");
    if (era == Era::latest) {
        // February 2020: the service capped every job at 30 days (maxJobDurationSeconds 2592000
        // under the default P150D). A shorter maxWallClockTime is the shorter cap, a choice.
        p["maxJobDurationSeconds"] = std::min<long long>(wall.count(), kMaxJobDurationSeconds);
        if (!p.contains("cleanupNodeBeforeRun")) p["cleanupNodeBeforeRun"] = false;
        if (!p.contains("cleanupNodeAfterRun")) p["cleanupNodeAfterRun"] = false;
        constraints["maxAttempts"] = kMaxAttempts;
    }
    for (const char* block : kWithProcessCount) {
        if (p.contains(block) && p[block].is_object() && !p[block].contains("processCount")) {
            p[block]["processCount"] = p["nodeCount"];
        }
    }
    // The spec's default: CNTK runs Python unless told BrainScript.
    if (p.contains("cntkSettings") && p["cntkSettings"].is_object() && !p["cntkSettings"].contains("languageType")) {
        p["cntkSettings"]["languageType"] = "Python";
    }
    p["toolType"] = tool_type(p);
    p["jobOutputDirectoryPathSegment"] = output_segment;
    if (p.contains("mountVolumes")) fill_mount_defaults(p["mountVolumes"]);
    p["executionState"] = "queued";
    p["executionStateTransitionTime"] = p["creationTime"];
}

void fill_cluster_defaults(json& p, const std::string& setup_suffix, Era era) {
    if (!p.contains("vmPriority")) p["vmPriority"] = "dedicated";
    // The service kept a cluster's VM size upper-cased ("Standard_D1_v2" -> "STANDARD_D1_V2",
    // recorded); a file server's as sent.
    if (p.contains("vmSize") && p["vmSize"].is_string()) p["vmSize"] = upper(p["vmSize"].get<std::string>());
    json& scale = p["scaleSettings"];
    if (!scale.is_object()) scale = {{"manual", {{"targetNodeCount", 0}}}};
    fill_scale_defaults(scale, era);
    if (!p.contains("virtualMachineConfiguration")) {
        p["virtualMachineConfiguration"] = {
            // July 2021: the AML compute runtime on Ubuntu 18.04 (microsoft-dsvm azureml runtime
            // from December 2019 to February 2021, recorded).
            {"imageReference", era == Era::latest ? json{{"publisher", "microsoft-dsvm"},
                                                           {"offer", "amlcompute"},
                                                           {"sku", "runtime-gen1-ubuntu18"},
                                                           {"version", "latest"}}
                                                     : json{{"publisher", "Canonical"},
                                                           {"offer", "UbuntuServer"},
                                                           {"sku", "16.04-LTS"},
                                                           {"version", "latest"}}}};
    }
    // An image given without a version is its latest, as the service filled it in.
    json& vm = p["virtualMachineConfiguration"];
    if (vm.is_object() && vm.contains("imageReference") && vm["imageReference"].is_object() &&
        !vm["imageReference"].contains("version") && !vm["imageReference"].contains("virtualMachineImageId")) {
        vm["imageReference"]["version"] = "latest";
    }
    if (p.contains("nodeSetup") && p["nodeSetup"].is_object()) {
        json& setup = p["nodeSetup"];
        if (setup.contains("mountVolumes")) fill_mount_defaults(setup["mountVolumes"]);
        if (setup.contains("setupTask") && setup["setupTask"].is_object()) {
            setup["setupTask"]["stdOutErrPathSuffix"] = setup_suffix;
        }
    }
    p["allocationState"] = "steady";
    p["allocationStateTransitionTime"] = p["creationTime"];
    p["currentNodeCount"] = 0;
    p["nodeStateCounts"] = {{"idleNodeCount", 0},
                            {"runningNodeCount", 0},
                            {"preparingNodeCount", 0},
                            {"unusableNodeCount", 0},
                            {"leavingNodeCount", 0}};
}

void fill_scale_defaults(json& scale, Era era) {
    if (scale.contains("manual") && scale["manual"].is_object()) {
        json& manual = scale["manual"];
        if (!manual.contains("targetNodeCount")) manual["targetNodeCount"] = 0;
        if (!manual.contains("nodeDeallocationOption")) manual["nodeDeallocationOption"] = "requeue";
    }
    if (scale.contains("autoScale") && scale["autoScale"].is_object() && !scale["autoScale"].contains("initialNodeCount")) {
        // The spec says 0; by February 2020 the service started an auto-scale cluster given
        // none at its minimum (recorded: minimum 1, initial 1). Before, 0.
        json& autoscale = scale["autoScale"];
        autoscale["initialNodeCount"] = era == Era::latest ? autoscale.value("minimumNodeCount", json(0)) : json(0);
    }
}

void check_cluster_image(const json& p) {
    if (!p.contains("virtualMachineConfiguration") || !p["virtualMachineConfiguration"].is_object()) return;
    const json& vm = p["virtualMachineConfiguration"];
    if (!vm.contains("imageReference") || !vm["imageReference"].is_object()) return;
    const json& image = vm["imageReference"];
    auto field = [&](const char* key) { return image.contains(key) && image[key].is_string() ? image[key].get<std::string>() : ""; };
    const std::string publisher = field("publisher"), offer = field("offer"), sku = field("sku");
    if (iequals(publisher, "microsoft-ads") && iequals(offer, "linux-data-science-vm-ubuntu") && iequals(sku, "linuxdsvmubuntu")) {
        throw CloudError(400, "PropertyNotSupported",
                         "The specified value Publisher=" + publisher + ",Offer=" + offer + ",SKU=" + sku +
                             " for property imageReference is not supported");
    }
}

std::string automatic_subnet_id(const std::string& subscription) {
    const std::string guid = crypto::uuid4();
    return "/subscriptions/" + subscription + "/resourceGroups/fileserverrg-" + guid +
           "/providers/Microsoft.Network/virtualNetworks/" + guid + "vnet/subnets/Subnet-1";
}

void fill_file_server_defaults(json& p, const std::string& address, const std::string& mount_point,
                               const std::string& subscription) {
    if (p.contains("dataDisks") && p["dataDisks"].is_object() && !p["dataDisks"].contains("cachingType")) {
        p["dataDisks"]["cachingType"] = "none";
    }
    if (!subscription.empty() && !p.contains("subnet")) p["subnet"] = {{"id", automatic_subnet_id(subscription)}};
    p["mountSettings"] = {{"mountPoint", mount_point}, {"fileServerPublicIP", address}, {"fileServerInternalIP", address}};
}

}  // namespace bai::arm
