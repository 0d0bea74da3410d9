// The OData $filter and $select of the ARM list operations (the 2017-09-01-preview lists, resource
// groups), over the documents the list returns. $filter: common/odata/filter.h's, strings compared
// without regard to case, as ARM compares names and states (a choice: the service's rule is not
// on record). $select: property paths separated by commas; the documents keep those and their
// `id`.
#pragma once

#include <functional>
#include <memory>

#include "common/odata/filter.h"
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace bai::arm {

// A $filter (or $select) that cannot be parsed; what() names the position.
using FilterError = odata::FilterError;

using DocumentFilter = std::function<bool(const nlohmann::json& document)>;

// Throws FilterError.
DocumentFilter parse_odata_filter(const std::string& text);
// Throws FilterError (an empty path).
nlohmann::json select_paths(const nlohmann::json& document, const std::string& select);

}  // namespace bai::arm
