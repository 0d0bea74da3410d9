// The $select of the Batch service's lists: the top-level properties to keep (`id,state`). Their
// $filter is common/odata/filter.h's, strings compared as they are.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace bai::batch {

// The names of a $select (comma-separated, blanks around them ignored). Throws
// std::invalid_argument for an empty name or one that is not letters and digits.
std::vector<std::string> parse_select(std::string_view text);
// `doc` with only `fields` (those it has).
nlohmann::json select_fields(const nlohmann::json& doc, const std::vector<std::string>& fields);

}  // namespace bai::batch
