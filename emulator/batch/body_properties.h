// Request bodies against the Batch service's types (its swagger's definitions, compiled in from
// spec/): a property a type does not have is refused, as the service's deserializer refuses it,
// with the property's path ("startTask.resourceFiles[0].bogus").
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace bai::batch {

// The JSON text of spec/batch-2022-10-01.16.0-definitions.json.
extern const char* const kBatchDefinitions;

// The path of the first property of `body` that the definition (PoolAddParameter, ...) and
// those it refers to do not have, or nullopt. A definition the table lacks checks nothing.
std::optional<std::string> unknown_property(const nlohmann::json& body, const std::string& definition);
// BatchError 400 InvalidRequestBody naming it (PropertyName, Reason), when there is one.
void refuse_unknown_properties(const nlohmann::json& body, const std::string& definition);

}  // namespace bai::batch
