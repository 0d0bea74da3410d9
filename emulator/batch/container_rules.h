// The container parts of Batch request bodies, checked when a pool, job or task is added: a
// task's containerSettings (imageName an image reference, containerRunOptions a string,
// workingDirectory one of the service's two, registry an object of strings) and a pool's
// containerConfiguration (type dockerCompatible, containerImageNames image references,
// containerRegistries such objects). Refused with the service's 400s naming the property.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace bai::batch {

// `task`'s containerSettings, when it has them; `prefix` names the task ("startTask.").
void check_container_settings(const nlohmann::json& task, const std::string& prefix);
// `configuration`'s containerConfiguration (a virtualMachineConfiguration), when it has one.
void check_container_configuration(const nlohmann::json& configuration, const std::string& prefix);

}  // namespace bai::batch
