// What the Batch service checks in a pool to add, patch or resize (property paths as it names
// them), and the document it keeps of a pool added.
#pragma once

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace bai::batch {

// Throws BatchError (MissingRequiredProperty, InvalidPropertyValue) naming the property.
void check_pool_to_add(const nlohmann::json& body);
// networkConfiguration.subnetId, when given, names a subnet of a virtual network the emulator's
// ARM holds: `network` gives the stored document of a network's id, or nullopt. Throws BatchError
// InvalidPropertyValue naming subnetId, as the service refuses a subnet it cannot use.
void check_pool_network(const nlohmann::json& body,
                        const std::function<std::optional<nlohmann::json>(const std::string&)>& network);
// A checked pool's settings with the service's defaults and forms (an auto pool's specification
// as a job shows it; a pool's document without its state).
nlohmann::json pool_specification(const nlohmann::json& body);
// The stored document of a checked pool: the request's properties with the service's defaults
// and state (active, allocation resizing until it settles, no nodes yet), `now` for its times.
nlohmann::json new_pool_document(const nlohmann::json& body, const std::string& now);
// autoScaleEvaluationInterval, when given: PT5M to PT168H, as the service allows.
void check_evaluation_interval(const nlohmann::json& body);
// A pool's autoScaleEvaluationInterval (PT15M when it has none).
std::chrono::seconds evaluation_interval_of(const nlohmann::json& pool);
// Whether the pool's nodes run Windows (cloudServiceConfiguration, or a Windows node agent).
bool is_windows_pool(const nlohmann::json& pool);
// A pool id: 1 to 64 letters, digits, hyphens and underscores.
bool is_valid_pool_id(const std::string& id);

}  // namespace bai::batch
