// What the Batch service checks in a pool to add, patch or resize (property paths as it names
// them), and the document it keeps of a pool added.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

namespace bai::batch {

// Throws BatchError (MissingRequiredProperty, InvalidPropertyValue) naming the property.
void check_pool_to_add(const nlohmann::json& body);
// The stored document of a checked pool: the request's properties with the service's defaults
// and state (active, allocation steady or resizing, no nodes yet), `now` for its times.
nlohmann::json new_pool_document(const nlohmann::json& body, const std::string& now);
// autoScaleEvaluationInterval, when given: PT5M to PT168H, as the service allows.
void check_evaluation_interval(const nlohmann::json& body);
// A pool's autoScaleEvaluationInterval (PT15M when it has none).
std::chrono::seconds evaluation_interval_of(const nlohmann::json& pool);
// A pool id: 1 to 64 letters, digits, hyphens and underscores.
bool is_valid_pool_id(const std::string& id);

}  // namespace bai::batch
