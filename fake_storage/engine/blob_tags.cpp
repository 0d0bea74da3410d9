#include "fake_storage/engine/blob_tags.h"

#include <nlohmann/json.hpp>
#include <pugixml.hpp>

#include <cstring>
#include <optional>
#include <set>

#include "common/text/ascii.h"
#include "common/text/percent_encoding.h"
#include "fake_storage/engine/storage_error.h"

namespace bai::storage {
namespace {

constexpr size_t kMaxTags = 10;
constexpr size_t kMaxKey = 128;
constexpr size_t kMaxValue = 256;

bool is_tag_character(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == ' ' || c == '+' ||
           c == '-' || c == '.' || c == '/' || c == ':' || c == '=' || c == '_';
}

bool all_tag_characters(std::string_view s) {
    for (char c : s) {
        if (!is_tag_character(c)) return false;
    }
    return true;
}

[[noreturn]] void invalid_tag() {
    fail(400, "InvalidTag", "The tags specified are invalid. It contains characters that are not permitted.");
}

[[noreturn]] void duplicate_tag() {
    fail(400, "DuplicateTagNames", "The tags specified contain duplicate names.");
}

[[noreturn]] void invalid_xml(const std::string& detail) {
    fail(400, "InvalidXmlDocument", "XML specified is not syntactically valid.\n" + detail);
}

std::string xml_text(std::string_view text) {
    std::string out;
    for (char c : text) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            default: out += c;
        }
    }
    return out;
}

}  // namespace

void validate_tags(const Tags& tags) {
    if (tags.size() > kMaxTags) fail(400, "TagsTooLarge", "The tags specified exceed the maximum permissible limit.");
    for (const auto& [key, value] : tags) {
        if (key.empty()) fail(400, "EmptyTagName", "The name of one of the tag key-value pairs is empty.");
        if (key.size() > kMaxKey || value.size() > kMaxValue) {
            fail(400, "TagsTooLarge", "The tags specified exceed the maximum permissible limit.");
        }
        if (!all_tag_characters(key) || !all_tag_characters(value)) invalid_tag();
    }
}

Tags parse_tags_header(std::string_view header) {
    Tags tags;
    if (header.empty()) return tags;
    size_t begin = 0;
    while (begin <= header.size()) {
        size_t end = header.find('&', begin);
        if (end == std::string_view::npos) end = header.size();
        std::string_view pair = header.substr(begin, end - begin);
        size_t eq = pair.find('=');
        if (eq == std::string_view::npos) invalid_tag();
        auto key = text::percent_decode(pair.substr(0, eq), true);
        auto value = text::percent_decode(pair.substr(eq + 1), true);
        if (!key || !value) invalid_tag();
        if (!tags.emplace(std::move(*key), std::move(*value)).second) duplicate_tag();
        begin = end + 1;
    }
    validate_tags(tags);
    return tags;
}

Tags parse_tags_xml(std::string_view body) {
    pugi::xml_document doc;
    // Whitespace is data here: a tag's value may be a space.
    pugi::xml_parse_result parsed =
        doc.load_buffer(body.data(), body.size(), pugi::parse_default | pugi::parse_ws_pcdata, pugi::encoding_utf8);
    if (!parsed) invalid_xml(std::string("Reason:") + parsed.description());
    pugi::xml_node root = doc.document_element();
    if (std::strcmp(root.name(), "Tags") != 0) invalid_xml("The root element must be Tags.");
    Tags tags;
    for (pugi::xml_node set : root.children()) {
        if (set.type() != pugi::node_element) continue;
        if (std::strcmp(set.name(), "TagSet") != 0) invalid_xml("Unexpected element " + std::string(set.name()) + " in Tags.");
        for (pugi::xml_node tag : set.children()) {
            if (tag.type() != pugi::node_element) continue;
            if (std::strcmp(tag.name(), "Tag") != 0) invalid_xml("Unexpected element " + std::string(tag.name()) + " in TagSet.");
            pugi::xml_node key = tag.child("Key");
            if (!key) invalid_xml("A Tag must have a Key.");
            if (!tags.emplace(key.text().get(), tag.child("Value").text().get()).second) duplicate_tag();
        }
    }
    validate_tags(tags);
    return tags;
}

std::string tags_xml(const Tags& tags) {
    std::string xml = "<?xml version=\"1.0\" encoding=\"utf-8\"?><Tags><TagSet>";
    for (const auto& [key, value] : tags) {
        xml += "<Tag><Key>" + xml_text(key) + "</Key><Value>" + xml_text(value) + "</Value></Tag>";
    }
    return xml + "</TagSet></Tags>";
}

std::string tags_to_json(const Tags& tags) {
    if (tags.empty()) return "";
    return nlohmann::json(tags).dump();
}

Tags tags_from_json(const std::string& json) {
    if (json.empty()) return {};
    return nlohmann::json::parse(json).get<Tags>();
}

// ---- expressions ----

struct TagExpression::Node {
    enum class Kind { and_, or_, compare } kind;
    std::shared_ptr<const Node> left, right;  // and_, or_
    std::string key, op, value;               // compare
};

namespace {

using Node = TagExpression::Node;

// A recursive descent parser of the service's grammar:
//   or      := and ("or" and)*        (x-ms-if-tags only)
//   and     := group ("and" group)*
//   group   := "(" or ")" | compare   (parentheses: x-ms-if-tags only)
//   compare := key op 'value'         key: a name of [A-Za-z0-9_] or "a quoted name"
class Parser {
public:
    Parser(std::string_view text, TagExpression::Use use) : text_(text), condition_(use == TagExpression::Use::condition) {}

    std::shared_ptr<const Node> parse() {
        auto root = parse_or();
        skip_spaces();
        if (at_ < text_.size()) error("unexpected '" + std::string(1, text_[at_]) + "'");
        if (root == nullptr) error("expecting an expression");
        return root;
    }

private:
    [[noreturn]] void error(const std::string& reason) const {
        if (condition_) {
            fail(400, "InvalidHeaderValue",
                 "The value for one of the HTTP headers is not in the correct format.\nHeaderName:x-ms-if-tags\n"
                 "HeaderValue:" + std::string(text_));
        }
        refuse("Error parsing query at or near character position " + std::to_string(at_) + ": " + reason);
    }

    [[noreturn]] void refuse(const std::string& message) const {
        fail(400, "InvalidQueryParameterValue",
             message + "\nQueryParameterName:where\nQueryParameterValue:" + std::string(text_));
    }

    // The first character that may not be in a tag's name or value, as the service names it.
    void check_characters(const std::string& text) const {
        for (char c : text) {
            if (!is_tag_character(c)) error("'" + std::string(1, c) + "' not permitted in tag name or value");
        }
    }

    void skip_spaces() {
        while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\t' || text_[at_] == '\r' || text_[at_] == '\n')) ++at_;
    }

    // A keyword ("and", "or") in any case, followed by something that cannot continue a name.
    bool keyword(std::string_view word) {
        skip_spaces();
        if (text_.size() - at_ < word.size() || !text::iequals(text_.substr(at_, word.size()), word)) return false;
        size_t after = at_ + word.size();
        if (after < text_.size()) {
            char c = text_[after];
            if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') return false;
        }
        at_ = after;
        return true;
    }

    std::shared_ptr<const Node> parse_or() {
        auto left = parse_and();
        while (keyword("or")) {
            if (!condition_) error("unexpected or");
            auto right = parse_and();
            left = std::make_shared<Node>(Node{Node::Kind::or_, left, right, "", "", ""});
        }
        return left;
    }

    std::shared_ptr<const Node> parse_and() {
        auto left = parse_group();
        while (keyword("and")) {
            auto right = parse_group();
            left = std::make_shared<Node>(Node{Node::Kind::and_, left, right, "", "", ""});
        }
        return left;
    }

    std::shared_ptr<const Node> parse_group() {
        skip_spaces();
        if (at_ < text_.size() && text_[at_] == '(') {
            if (!condition_) error("unexpected '('");
            if (++depth_ > 32) error("too deeply nested");
            ++at_;
            auto inner = parse_or();
            skip_spaces();
            if (at_ >= text_.size() || text_[at_] != ')') error("expected a ')' to close the expression group");
            ++at_;
            --depth_;
            return inner;
        }
        return parse_compare();
    }

    // A quoted string: `quote` doubled stands for itself.
    std::string quoted(char quote) {
        ++at_;
        std::string out;
        while (true) {
            if (at_ >= text_.size()) error(std::string("expected a ") + quote + " to close the string");
            char c = text_[at_++];
            if (c == quote) {
                if (at_ < text_.size() && text_[at_] == quote) {
                    out += quote;
                    ++at_;
                    continue;
                }
                return out;
            }
            out += c;
        }
    }

    std::shared_ptr<const Node> parse_compare() {
        skip_spaces();
        if (at_ >= text_.size()) error("expecting a tag name");
        std::string key;
        if (text_[at_] == '"') {
            key = quoted('"');
            if (key.empty()) error("tag must be between 1 and 128 characters in length");
            check_characters(key);
        } else {
            size_t start = at_;
            while (at_ < text_.size()) {
                char c = text_[at_];
                if (c == '=' || c == '<' || c == '>' || c == ' ' || c == '\t' || c == '(' || c == ')') break;
                ++at_;
            }
            key = std::string(text_.substr(start, at_ - start));
            if (key.empty()) error("expected a valid identifier");
            if (key.front() == '@') {
                if (condition_ || key != "@container") error("unsupported parameter '" + key + "'");
            } else {
                for (char c : key) {
                    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) error("unexpected '" + key + "'");
                }
            }
        }
        if (!condition_ && key.size() > kMaxKey) error("tag must be between 1 and 128 characters in length");
        skip_spaces();
        std::string op;
        for (const char* candidate : {">=", "<=", "<>", "=", ">", "<"}) {
            if (text_.substr(at_).starts_with(candidate)) {
                op = candidate;
                at_ += op.size();
                break;
            }
        }
        if (op.empty()) error("expecting an operator");
        if (op == "<>" && !condition_) error("unexpected <>");
        if (key == "@container" && op != "=") error("@container takes = only");
        skip_spaces();
        if (at_ >= text_.size() || text_[at_] != '\'') error("expecting tag value");
        std::string value = quoted('\'');
        if (!condition_ && value.size() > kMaxValue) error("tag value must be between 0 and 256 characters in length");
        check_characters(value);
        if (!condition_) count(key, op);
        return std::make_shared<Node>(Node{Node::Kind::compare, nullptr, nullptr, key, op, value});
    }

    // A Find Blobs query names at most ten tags, each once, or twice to bound a range.
    void count(const std::string& key, const std::string& op) {
        if (key == "@container") return;
        auto& ops = ops_[key];
        char kind = op[0] == '=' ? '=' : op[0];  // '=', '>' or '<'
        for (char seen : ops) {
            if (kind == '=' || seen == '=' || seen == kind) {
                error("can't have multiple conditions for a single tag unless they define a range");
            }
        }
        ops.push_back(kind);
        if (ops_.size() > kMaxTags) refuse("Error parsing query: there can be at most 10 unique tags in a query");
    }

    std::string_view text_;
    bool condition_;
    size_t at_ = 0;
    int depth_ = 0;
    std::map<std::string, std::string> ops_;
};

bool evaluate(const Node& n, const Tags& tags, const std::string& container) {
    switch (n.kind) {
        case Node::Kind::and_: return evaluate(*n.left, tags, container) && evaluate(*n.right, tags, container);
        case Node::Kind::or_: return evaluate(*n.left, tags, container) || evaluate(*n.right, tags, container);
        case Node::Kind::compare: break;
    }
    std::optional<std::string> actual;
    if (n.key == "@container") {
        actual = container;
    } else if (auto it = tags.find(n.key); it != tags.end()) {
        actual = it->second;
    }
    if (!actual) return false;
    int order = actual->compare(n.value);
    if (n.op == "=") return order == 0;
    if (n.op == "<>") return order != 0;
    if (n.op == ">") return order > 0;
    if (n.op == ">=") return order >= 0;
    if (n.op == "<") return order < 0;
    return order <= 0;  // "<="
}

void collect(const Node& n, const Tags& tags, Tags& out) {
    if (n.kind != Node::Kind::compare) {
        collect(*n.left, tags, out);
        collect(*n.right, tags, out);
        return;
    }
    if (auto it = tags.find(n.key); it != tags.end()) out.insert(*it);
}

}  // namespace

TagExpression TagExpression::parse(std::string_view text, Use use) {
    TagExpression e;
    e.text_ = std::string(text);
    e.root_ = Parser(text, use).parse();
    return e;
}

bool TagExpression::matches(const Tags& tags, const std::string& container) const {
    return root_ != nullptr && evaluate(*root_, tags, container);
}

Tags TagExpression::named(const Tags& tags) const {
    Tags out;
    if (root_ != nullptr) collect(*root_, tags, out);
    return out;
}

}  // namespace bai::storage
