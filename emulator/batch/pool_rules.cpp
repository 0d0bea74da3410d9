#include "emulator/batch/pool_rules.h"

#include "common/text/ascii.h"

#include <algorithm>
#include <algorithm>
#include <cctype>
#include <regex>
#include <regex>

#include "emulator/batch/autoscale_formula.h"
#include "emulator/batch/batch_error.h"
#include "emulator/batch/container_rules.h"
#include "emulator/batch/work_rules.h"
#include "emulator/validation/duration.h"

namespace bai::batch {

using nlohmann::json;

namespace {

void need_non_negative_int(const json& body, const char* name) {
    if (!body.contains(name)) return;
    const json& v = body[name];
    if (!v.is_number_integer() || v.get<long long>() < 0) {
        throw invalid_property(name, v.dump(), "The value must be an integer of 0 or more");
    }
}

void need_string(const json& parent, const std::string& path, const char* name, bool required) {
    if (!parent.contains(name)) {
        if (required) throw missing_property(path + name);
        return;
    }
    if (!parent[name].is_string() || parent[name].get<std::string>().empty()) {
        throw invalid_property(path + name, parent[name].dump(), "The value must be a non-empty string");
    }
}

}  // namespace

std::chrono::seconds evaluation_interval_of(const json& pool) {
    std::optional<std::chrono::seconds> d = validation::parse_duration(pool.value("autoScaleEvaluationInterval", "PT15M"));
    return d ? *d : std::chrono::minutes(15);
}

void check_evaluation_interval(const json& body) {
    if (!body.contains("autoScaleEvaluationInterval")) return;
    const json& v = body["autoScaleEvaluationInterval"];
    std::optional<std::chrono::seconds> d = v.is_string() ? validation::parse_duration(v.get<std::string>()) : std::nullopt;
    if (!d || *d < std::chrono::minutes(5) || *d > std::chrono::hours(168)) {
        throw invalid_property("autoScaleEvaluationInterval", v.dump(), "The interval is from 5 minutes to 168 hours (PT5M to PT168H)");
    }
}

bool is_valid_pool_id(const std::string& id) {
    if (id.empty() || id.size() > 64) return false;
    for (unsigned char c : id) {
        if (!std::isalnum(c) && c != '-' && c != '_') return false;
    }
    return true;
}

namespace {

// ARM ids are short; std::regex recurses per character, so nothing long reaches it.
constexpr size_t kMaxResourceId = 1024;

// The three forms of an image's resource id the service takes (names: no slash).
bool is_image_id(const std::string& id) {
    if (id.size() > kMaxResourceId) return false;
    static const std::regex kForms(
        R"(/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\.Compute/(images/[^/]+|galleries/[^/]+/images/[^/]+(/versions/[^/]+)?))",
        std::regex::icase);
    return std::regex_match(id, kForms);
}

const char* const kInvalidValue = "The value provided for one of the properties in the request body is invalid.";

}  // namespace

void check_pool_network(const json& body, const std::function<std::optional<json>(const std::string&)>& network) {
    if (!body.contains("networkConfiguration")) return;
    const json& configuration = body["networkConfiguration"];
    if (!configuration.is_object()) {
        throw invalid_property("networkConfiguration", configuration.dump(), "The value must be an object");
    }
    if (!configuration.contains("subnetId")) return;
    need_string(configuration, "networkConfiguration.", "subnetId", true);
    const std::string id = configuration["subnetId"];
    auto refuse = [&](const std::string& reason) {
        return BatchError(400, "InvalidPropertyValue", kInvalidValue,
                          {{"PropertyName", "subnetId"}, {"PropertyValue", id}, {"Reason", reason}});
    };
    static const std::regex kSubnet(
        R"((/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\.Network/virtualNetworks/[^/]+)/subnets/([^/]+))",
        std::regex::icase);
    std::smatch m;
    if (id.size() > kMaxResourceId || !std::regex_match(id, m, kSubnet)) {
        throw refuse("The specified subnetId must be of the format /subscriptions/{subscriptionId}/resourceGroups/"
                     "{resourceGroupName}/providers/Microsoft.Network/virtualNetworks/{vnetName}/subnets/{subnetName}");
    }
    const std::optional<json> found = network(m[1].str());
    const json* subnets = found && found->contains("properties") && (*found)["properties"].contains("subnets")
                              ? &(*found)["properties"]["subnets"]
                              : nullptr;
    const std::string subnet = text::lower(m[2].str());
    const bool exists = subnets && subnets->is_array() &&
                        std::any_of(subnets->begin(), subnets->end(), [&](const json& s) {
                            return s.is_object() && text::lower(s.value("name", std::string())) == subnet;
                        });
    if (!exists) {
        throw refuse("The specified subnetId does not name a subnet of a virtual network the emulator holds: make "
                     "the network with Microsoft.Network (az network vnet create) first");
    }
}

void check_pool_to_add(const json& body) {
    if (!body.is_object()) throw BatchError(400, "InvalidRequestBody", "The specified Request Body is not syntactically valid.");
    need_string(body, "", "id", true);
    const std::string id = body["id"];
    if (!is_valid_pool_id(id)) {
        throw invalid_property("id", id, "A pool id has 1 to 64 letters, digits, hyphens and underscores");
    }
    need_string(body, "", "vmSize", true);
    if (body.contains("displayName") && (!body["displayName"].is_string() || body["displayName"].get<std::string>().size() > 1024)) {
        throw invalid_property("displayName", body["displayName"].dump(), "The display name is a string of at most 1024 characters");
    }
    const bool vm = body.contains("virtualMachineConfiguration");
    const bool cloud = body.contains("cloudServiceConfiguration");
    if (!vm && !cloud) throw missing_property("virtualMachineConfiguration");
    if (vm && cloud) {
        throw invalid_property("cloudServiceConfiguration", body["cloudServiceConfiguration"].dump(),
                               "A pool has a virtualMachineConfiguration or a cloudServiceConfiguration, not both");
    }
    if (vm) {
        const json& c = body["virtualMachineConfiguration"];
        if (!c.is_object()) throw invalid_property("virtualMachineConfiguration", c.dump(), "The value must be an object");
        need_string(c, "virtualMachineConfiguration.", "nodeAgentSKUId", true);
        check_container_configuration(c, "virtualMachineConfiguration.");
        if (!c.contains("imageReference")) throw missing_property("virtualMachineConfiguration.imageReference");
        const json& image = c["imageReference"];
        if (!image.is_object()) {
            throw invalid_property("virtualMachineConfiguration.imageReference", image.dump(), "The value must be an object");
        }
        if (!image.contains("virtualMachineImageId")) {
            for (const char* part : {"publisher", "offer", "sku"}) {
                need_string(image, "virtualMachineConfiguration.imageReference.", part, true);
            }
        } else {
            need_string(image, "virtualMachineConfiguration.imageReference.", "virtualMachineImageId", true);
            const std::string id = image["virtualMachineImageId"];
            if (!is_image_id(id)) {
                throw BatchError(400, "InvalidPropertyValue", kInvalidValue,
                                 {{"PropertyName", "virtualMachineImageId"},
                                  {"PropertyValue", id},
                                  {"Reason", "The specified resource id must be of the format /subscriptions/{subscriptionId}/"
                                             "resourceGroups/{resourceGroupName}/providers/Microsoft.Compute/images/{imageName}, "
                                             "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/"
                                             "Microsoft.Compute/galleries/{galleryName}/images/{galleryImageName}/versions/"
                                             "{galleryImageVersionName}, or /subscriptions/{subscriptionId}/resourceGroups/"
                                             "{resourceGroupName}/providers/Microsoft.Compute/galleries/{galleryName}/images/"
                                             "{galleryImageName}"}});
            }
        }
    }
    need_non_negative_int(body, "targetDedicatedNodes");
    need_non_negative_int(body, "targetLowPriorityNodes");
    need_non_negative_int(body, "taskSlotsPerNode");
    if (body.contains("taskSchedulingPolicy")) {
        const json& policy = body["taskSchedulingPolicy"];
        if (!policy.is_object()) throw invalid_property("taskSchedulingPolicy", policy.dump(), "The value must be an object");
        need_string(policy, "taskSchedulingPolicy.", "nodeFillType", true);
        const std::string fill = text::lower(policy["nodeFillType"].get<std::string>());
        if (fill != "pack" && fill != "spread") {
            throw invalid_property("taskSchedulingPolicy.nodeFillType", policy["nodeFillType"].dump(),
                                   "The value must be spread or pack");
        }
    }
    const bool auto_scale = body.value("enableAutoScale", false);
    if (body.contains("enableAutoScale") && !body["enableAutoScale"].is_boolean()) {
        throw invalid_property("enableAutoScale", body["enableAutoScale"].dump(), "The value must be true or false");
    }
    if (auto_scale) {
        check_evaluation_interval(body);
        need_string(body, "", "autoScaleFormula", true);
        AutoScaleResult check = evaluate_autoscale(body["autoScaleFormula"], metrics_at(0));
        if (check.error) {
            throw BatchError(400, "InvalidAutoScaleFormula", "The specified autoscale formula is not valid.",
                             {{"PropertyName", "autoScaleFormula"}, {"Reason", *check.error}});
        }
        for (const char* target : {"targetDedicatedNodes", "targetLowPriorityNodes"}) {
            if (body.contains(target)) {
                throw invalid_property(target, body[target].dump(), "A target cannot be given when enableAutoScale is true");
            }
        }
    } else if (body.contains("autoScaleFormula")) {
        throw invalid_property("autoScaleFormula", body["autoScaleFormula"].dump(),
                               "A formula is given only when enableAutoScale is true");
    }
    if (body.contains("startTask")) {
        const json& task = body["startTask"];
        if (!task.is_object()) throw invalid_property("startTask", task.dump(), "The value must be an object");
        need_string(task, "startTask.", "commandLine", true);
        check_task_lists(task, "startTask.");
        if (task.contains("maxTaskRetryCount") && (!task["maxTaskRetryCount"].is_number_integer() || task["maxTaskRetryCount"].get<long long>() < -1)) {
            throw invalid_property("startTask.maxTaskRetryCount", task["maxTaskRetryCount"].dump(),
                                   "The value must be -1 (no limit) or an integer of 0 or more");
        }
        if (task.contains("waitForSuccess") && !task["waitForSuccess"].is_boolean()) {
            throw invalid_property("startTask.waitForSuccess", task["waitForSuccess"].dump(), "The value must be true or false");
        }
    }
}

namespace {

// What the service fills in or normalizes in a pool's virtualMachineConfiguration, as its answers
// show: an image by publisher, offer and sku is version "latest"; a data disk is "none" cached
// on "standard_lrs".
void complete_vm_configuration(json& configuration) {
    json& image = configuration["imageReference"];
    if (!image.contains("virtualMachineImageId") && !image.contains("version")) image["version"] = "latest";
    if (configuration.contains("dataDisks") && configuration["dataDisks"].is_array()) {
        for (json& disk : configuration["dataDisks"]) {
            if (!disk.is_object()) continue;
            if (!disk.contains("caching")) disk["caching"] = "none";
            if (!disk.contains("storageAccountType")) disk["storageAccountType"] = "standard_lrs";
        }
    }
}

// The service answers enum values in its own case ("pack" is shown "Pack"); the value was checked.
std::string node_fill_type(const json& body) {
    if (!body.contains("taskSchedulingPolicy")) return "Spread";
    return text::lower(body["taskSchedulingPolicy"]["nodeFillType"].get<std::string>()) == "pack" ? "Pack" : "Spread";
}

}  // namespace

bool is_windows_pool(const json& pool) {
    if (pool.contains("cloudServiceConfiguration")) return true;
    const json vm = pool.value("virtualMachineConfiguration", json::object());
    return vm.is_object() && text::lower(vm.value("nodeAgentSKUId", "")).rfind("batch.node.windows", 0) == 0;
}

json pool_specification(const json& body) {
    json pool = body;
    // The service keeps a pool's vmSize lower-cased (standard_a1 for Standard_A1).
    pool["vmSize"] = text::lower(body["vmSize"].get<std::string>());
    if (pool.contains("virtualMachineConfiguration")) complete_vm_configuration(pool["virtualMachineConfiguration"]);
    if (pool.contains("cloudServiceConfiguration") && pool["cloudServiceConfiguration"].is_object() &&
        !pool["cloudServiceConfiguration"].contains("osVersion")) {
        pool["cloudServiceConfiguration"]["osVersion"] = "*";  // the latest of its family
    }
    const bool auto_scale = body.value("enableAutoScale", false);
    pool["enableAutoScale"] = auto_scale;
    if (!auto_scale) {
        pool["targetDedicatedNodes"] = body.value("targetDedicatedNodes", 0);
        pool["targetLowPriorityNodes"] = body.value("targetLowPriorityNodes", 0);
        pool["resizeTimeout"] = body.value("resizeTimeout", "PT15M");
    } else {
        pool["autoScaleEvaluationInterval"] = body.value("autoScaleEvaluationInterval", "PT15M");
    }
    if (!pool.contains("enableInterNodeCommunication")) pool["enableInterNodeCommunication"] = false;
    if (!pool.contains("taskSlotsPerNode")) pool["taskSlotsPerNode"] = 1;
    pool["taskSchedulingPolicy"] = {{"nodeFillType", node_fill_type(body)}};
    if (pool.contains("userAccounts") && pool["userAccounts"].is_array()) {
        for (json& user : pool["userAccounts"]) {
            if (!user.is_object()) continue;
            if (!user.contains("elevationLevel")) user["elevationLevel"] = "nonadmin";
            if (is_windows_pool(pool) && !user.contains("windowsUserConfiguration")) user["windowsUserConfiguration"] = {{"loginMode", "batch"}};
        }
    }
    if (pool.contains("networkConfiguration") && pool["networkConfiguration"].is_object()) {
        json& network = pool["networkConfiguration"];
        if (!network.contains("dynamicVNetAssignmentScope")) network["dynamicVNetAssignmentScope"] = "none";
        const bool has_nat = network.contains("endpointConfiguration") && network["endpointConfiguration"].is_object() &&
                             network["endpointConfiguration"].contains("inboundNATPools") &&
                             network["endpointConfiguration"]["inboundNATPools"].is_array();
        if (has_nat) {
            for (json& rule : network["endpointConfiguration"]["inboundNATPools"]) {
                if (!rule.is_object() || !rule.contains("networkSecurityGroupRules") || !rule["networkSecurityGroupRules"].is_array()) continue;
                for (json& group_rule : rule["networkSecurityGroupRules"]) {
                    if (group_rule.is_object() && !group_rule.contains("sourcePortRanges")) group_rule["sourcePortRanges"] = json::array({"*"});
                }
            }
        }
    }
    return pool;
}

json new_pool_document(const json& body, const std::string& now) {
    json pool = pool_specification(body);
    if (pool["enableAutoScale"].get<bool>()) {
        pool["targetDedicatedNodes"] = 0;
        pool["targetLowPriorityNodes"] = 0;
    }
    pool["creationTime"] = now;
    pool["state"] = "active";
    pool["stateTransitionTime"] = now;
    // A new pool is resizing, with or without nodes to get, until its allocation has had its time
    // (the nodes' allocation_due).
    pool["allocationState"] = "resizing";
    pool["_allocating"] = true;
    pool["allocationStateTransitionTime"] = now;
    pool["currentDedicatedNodes"] = 0;
    pool["currentLowPriorityNodes"] = 0;
    return pool;
}

}  // namespace bai::batch
