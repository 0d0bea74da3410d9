// The OData $filter and $select of the 2017-09-01-preview list operations, over the documents the
// list returns. $filter: comparisons `PATH eq|ne|gt|ge|lt|le LITERAL`, `startswith(PATH, 'x')`,
// `endswith(PATH, 'x')`, `contains(PATH, 'x')`, combined with `and`, `or`, `not` and parentheses;
// PATH is a property path with `/` between names (`properties/provisioningState`); literals are
// 'strings' ('' for a quote), numbers, true, false, null. Strings compare without regard to case,
// as ARM compares names and states (a choice: the service's rule is not on record). $select:
// property paths separated by commas; the documents keep those and their `id`.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace bai::arm {

// A $filter that cannot be parsed; what() names the position.
struct FilterError : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

using DocumentFilter = std::function<bool(const nlohmann::json& document)>;

// Throws FilterError.
DocumentFilter parse_odata_filter(const std::string& text);
// Throws FilterError (an empty path).
nlohmann::json select_paths(const nlohmann::json& document, const std::string& select);

}  // namespace bai::arm
