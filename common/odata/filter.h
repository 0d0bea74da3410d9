// OData $filter over JSON documents, as the ARM list operations and the Batch service's lists
// take it: comparisons (eq, ne, gt, ge, lt, le) of a property path (`state`,
// `properties/provisioningState`) with a literal ('text' with '' for a quote, numbers, true,
// false, null, datetime'2020-11-24T01:36:04Z' compared as a time), a literal first turning the
// operator around; the functions startswith(path,'text'), endswith(path,'text'),
// contains(path,'text') and substringof('text',path); and, or, not and parentheses (keywords in
// any case). A property a document lacks is null. Strings compare as they are or without regard
// to case (ARM's names and states), as the caller says. Nesting (64) and length (16 KiB) are
// bounded: the parser and the evaluation recurse.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>

namespace bai::odata {

// A $filter that cannot be parsed; what() says what was expected at which position.
struct FilterError : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

enum class Case { sensitive, insensitive };

class Filter {
public:
    // Throws FilterError.
    static Filter parse(std::string_view text, Case strings);
    bool matches(const nlohmann::json& doc) const;

    struct Node;

private:
    Filter(std::shared_ptr<const Node> root, bool fold) : root_(std::move(root)), fold_(fold) {}
    std::shared_ptr<const Node> root_;
    bool fold_;
};

}  // namespace bai::odata
