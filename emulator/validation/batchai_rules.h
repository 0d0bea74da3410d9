// What the swagger cannot say: the cross-field rules of jobs, clusters and mount volumes
// (shared/reference/batchai-api.md section 8).
#pragma once

#include <nlohmann/json.hpp>

#include "emulator/validation/validator.h"

namespace bai::validation {

// `properties` is the body's "properties" object; findings are reported under "properties.".
void check_job_rules(const nlohmann::json& properties, ApiVersion version, Mode mode, Report& report);
void check_cluster_rules(const nlohmann::json& properties, Mode mode, Report& report);
// properties.vmSize names a size the service offered (vm_sizes.h); clusters and file servers.
void check_vm_size(const nlohmann::json& properties, Report& report);

inline constexpr const char* kToolkits[] = {
    "cntkSettings",  "pyTorchSettings",   "tensorFlowSettings",    "caffeSettings",
    "caffe2Settings", "chainerSettings", "customToolkitSettings", "customMpiSettings",
    "horovodSettings"};

}  // namespace bai::validation
