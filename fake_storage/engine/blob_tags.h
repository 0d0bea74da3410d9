// Blob index tags: up to ten key/value pairs per blob, set with Set Blob Tags or x-ms-tags, used
// in conditions (x-ms-if-tags) and to find blobs (Find Blobs by Tags, `where=`). No HTTP and no
// storage here: the rules, the two expression languages and their evaluation.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace bai::storage {

// Keys compare with regard to case, as the service's do.
using Tags = std::map<std::string, std::string>;

// The service's limits: ten tags, keys of 1 to 128 and values of 0 to 256 characters among
// letters, digits, space and + - . / : = _. Throws 400 TagsTooLarge, EmptyTagName, InvalidTag.
void validate_tags(const Tags& tags);
// x-ms-tags: URL-encoded pairs, `k1=v1&k2=v2` ('+' is a space). Validated; 400 InvalidTag
// for a malformed or repeated pair.
Tags parse_tags_header(std::string_view header);
// Set Blob Tags' body: <Tags><TagSet><Tag><Key/><Value/></Tag>...</TagSet></Tags>. Validated;
// 400 InvalidXmlDocument when it is not that document, DuplicateTagNames for a repeated key.
Tags parse_tags_xml(std::string_view body);
std::string tags_xml(const Tags& tags);
// As stored in state.db (JSON object; "" for none).
std::string tags_to_json(const Tags& tags);
Tags tags_from_json(const std::string& json);

// A parsed expression over a blob's tags (and, in a Find Blobs query, its container).
class TagExpression {
public:
    struct Node;
    // Which language: a Find Blobs `where` (AND only, = > >= < <=, at most ten tags, `@container`;
    // errors 400 InvalidQueryParameterValue naming `where`) or x-ms-if-tags (also OR, <>, and
    // parentheses; errors 400 InvalidHeaderValue naming the header).
    enum class Use { find, condition };
    static TagExpression parse(std::string_view text, Use use);

    // True when the tags (of a blob in `container`) satisfy the expression. Comparisons are of
    // strings, byte by byte; a comparison with a missing tag is false.
    bool matches(const Tags& tags, const std::string& container = "") const;
    // The tags the expression names, with the blob's values (what Find Blobs returns of a blob).
    Tags named(const Tags& tags) const;
    const std::string& text() const { return text_; }

private:
    std::shared_ptr<const Node> root_;
    std::string text_;
};

}  // namespace bai::storage
