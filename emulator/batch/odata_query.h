// The OData query options of the Batch service's lists. $filter: comparisons (eq, ne, gt, ge,
// lt, le) of a property path (`state`, `executionInfo/exitCode`) with a literal ('text' with ''
// for a quote, numbers, true, false, null, datetime'2020-11-24T01:36:04Z'), the functions
// startswith(path,'text'), endswith(path,'text') and substringof('text',path), joined by and, or,
// not and parentheses; evaluated on each document as the list shows it. $select: the top-level
// properties to keep (`id,state`).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace bai::batch {

class ODataFilter {
public:
    // Throws std::invalid_argument saying what is wrong and where (1-based character).
    static ODataFilter parse(std::string_view text);
    bool matches(const nlohmann::json& doc) const;

    struct Node;

private:
    explicit ODataFilter(std::shared_ptr<const Node> root) : root_(std::move(root)) {}
    std::shared_ptr<const Node> root_;
};

// The names of a $select (comma-separated, blanks around them ignored). Throws
// std::invalid_argument for an empty name or one that is not letters and digits.
std::vector<std::string> parse_select(std::string_view text);
// `doc` with only `fields` (those it has).
nlohmann::json select_fields(const nlohmann::json& doc, const std::vector<std::string>& fields);

}  // namespace bai::batch
