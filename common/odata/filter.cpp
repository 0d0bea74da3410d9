#include "common/odata/filter.h"

#include <cctype>
#include <cstdlib>
#include <optional>
#include <stdexcept>

#include "common/text/ascii.h"
#include "common/time/timestamps.h"

namespace bai::odata {

using nlohmann::json;

// A literal, or a property path (its segments).
struct Operand {
    bool is_path = false;
    std::vector<std::string> path;
    json literal;
    bool is_datetime = false;
};

struct Filter::Node {
    enum class Kind { and_, or_, not_, compare, function } kind;
    std::shared_ptr<const Node> left, right;  // and, or; not uses left
    std::string op;                           // eq ne gt ge lt le, or the function's name
    Operand a, b;                             // compare: a op b; function: path a, text b
};

namespace {

using Node = Filter::Node;
constexpr size_t kMaxLength = 16 * 1024;
constexpr int kMaxDepth = 64;

class Parser {
public:
    explicit Parser(std::string_view text) : text_(text) {}

    std::shared_ptr<const Node> parse() {
        auto root = parse_or(0);
        skip_blanks();
        if (at_ < text_.size()) fail("unexpected '" + std::string(text_.substr(at_, 20)) + "'");
        return root;
    }

private:
    [[noreturn]] void fail(const std::string& what) const {
        throw FilterError("$filter: " + what + " at position " + std::to_string(at_ + 1) + " of '" + std::string(text_) + "'");
    }
    void skip_blanks() {
        while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
    }
    static bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
    // The keyword `word` (not the start of a longer name) is next: consumed.
    bool keyword(std::string_view word) {
        skip_blanks();
        if (text_.size() - at_ < word.size() || !text::iequals(text_.substr(at_, word.size()), word)) return false;
        const size_t end = at_ + word.size();
        if (end < text_.size() && word_char(text_[end])) return false;
        at_ = end;
        return true;
    }
    bool symbol(char c) {
        skip_blanks();
        if (at_ < text_.size() && text_[at_] == c) {
            ++at_;
            return true;
        }
        return false;
    }
    void expect(char c) {
        if (!symbol(c)) fail(std::string("'") + c + "' expected");
    }

    std::shared_ptr<const Node> parse_or(int depth) {
        auto left = parse_and(depth);
        while (keyword("or")) left = join(Node::Kind::or_, left, parse_and(depth));
        return left;
    }
    std::shared_ptr<const Node> parse_and(int depth) {
        auto left = parse_unary(depth);
        while (keyword("and")) left = join(Node::Kind::and_, left, parse_unary(depth));
        return left;
    }
    static std::shared_ptr<const Node> join(Node::Kind kind, std::shared_ptr<const Node> a, std::shared_ptr<const Node> b) {
        auto n = std::make_shared<Node>();
        n->kind = kind;
        n->left = std::move(a);
        n->right = std::move(b);
        return n;
    }
    std::shared_ptr<const Node> parse_unary(int depth) {
        if (depth > kMaxDepth) fail("the expression nests too deeply");
        if (keyword("not")) {
            auto n = std::make_shared<Node>();
            n->kind = Node::Kind::not_;
            n->left = parse_unary(depth + 1);
            return n;
        }
        if (symbol('(')) {
            auto inner = parse_or(depth + 1);
            expect(')');
            return inner;
        }
        for (const char* function : {"startswith", "endswith", "contains", "substringof"}) {
            const size_t start = at_;
            if (keyword(function)) {
                if (!symbol('(')) {
                    at_ = start;  // a property of that name
                    break;
                }
                auto n = std::make_shared<Node>();
                n->kind = Node::Kind::function;
                n->op = text::lower(function);
                Operand first = parse_operand();
                expect(',');
                Operand second = parse_operand();
                expect(')');
                // substringof('text', path) (Batch's); the others, contains too, (path, 'text').
                if (n->op == "substringof") std::swap(first, second);
                if (!first.is_path || second.is_path || !second.literal.is_string()) {
                    fail(n->op + " takes a property and a string");
                }
                n->a = std::move(first);
                n->b = std::move(second);
                return n;
            }
        }
        auto n = std::make_shared<Node>();
        n->kind = Node::Kind::compare;
        n->a = parse_operand();
        bool found = false;
        for (const char* op : {"eq", "ne", "gt", "ge", "lt", "le"}) {
            if (keyword(op)) {
                n->op = op;
                found = true;
                break;
            }
        }
        if (!found) fail("a comparison (eq, ne, gt, ge, lt, le) expected");
        n->b = parse_operand();
        if (n->a.is_path == n->b.is_path) fail("a comparison takes a property and a literal");
        if (!n->a.is_path) {  // 'x' eq id: the property first, the operator turned around
            std::swap(n->a, n->b);
            static const std::pair<const char*, const char*> kMirror[] = {{"gt", "lt"}, {"lt", "gt"}, {"ge", "le"}, {"le", "ge"}};
            for (const auto& [from, to] : kMirror) {
                if (n->op == from) {
                    n->op = to;
                    break;
                }
            }
        }
        return n;
    }

    Operand parse_operand() {
        skip_blanks();
        Operand out;
        if (at_ >= text_.size()) fail("an operand expected");
        const char c = text_[at_];
        if (c == '\'') {
            out.literal = parse_string();
            return out;
        }
        if (std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '+') {
            const size_t start = at_++;
            while (at_ < text_.size() && (std::isdigit(static_cast<unsigned char>(text_[at_])) || text_[at_] == '.')) ++at_;
            const std::string number(text_.substr(start, at_ - start));
            char* end = nullptr;
            if (number.find('.') == std::string::npos) {
                const long long v = std::strtoll(number.c_str(), &end, 10);
                if (end == nullptr || *end != '\0' || number == "-" || number == "+") fail("a number expected");
                out.literal = v;
            } else {
                const double v = std::strtod(number.c_str(), &end);
                if (end == nullptr || *end != '\0') fail("a number expected");
                out.literal = v;
            }
            return out;
        }
        if (keyword("true")) {
            out.literal = true;
            return out;
        }
        if (keyword("false")) {
            out.literal = false;
            return out;
        }
        if (keyword("null")) return out;
        if (text_.substr(at_, 9) == "datetime'") {
            at_ += 8;
            out.literal = parse_string();
            if (!time::parse_iso8601(out.literal.get<std::string>())) fail("a datetime'...' literal is not a time");
            out.is_datetime = true;
            return out;
        }
        if (!std::isalpha(static_cast<unsigned char>(c))) fail("a property or a literal expected");
        out.is_path = true;
        for (;;) {
            const size_t start = at_;
            while (at_ < text_.size() && word_char(text_[at_])) ++at_;
            if (at_ == start) fail("a property name expected");
            out.path.emplace_back(text_.substr(start, at_ - start));
            if (at_ < text_.size() && text_[at_] == '/') {
                ++at_;
                continue;
            }
            return out;
        }
    }

    std::string parse_string() {
        ++at_;  // the opening quote
        std::string out;
        for (;;) {
            if (at_ >= text_.size()) fail("a string without its closing quote");
            const char c = text_[at_++];
            if (c != '\'') {
                out.push_back(c);
            } else if (at_ < text_.size() && text_[at_] == '\'') {
                out.push_back('\'');
                ++at_;
            } else {
                return out;
            }
        }
    }

    std::string_view text_;
    size_t at_ = 0;
};

const json* resolve(const json& doc, const std::vector<std::string>& path) {
    const json* at = &doc;
    for (const std::string& segment : path) {
        if (!at->is_object()) return nullptr;
        auto it = at->find(segment);
        if (it == at->end()) return nullptr;
        at = &*it;
    }
    return at;
}

// -1, 0, 1, or nullopt when the two do not compare (different kinds, a null).
std::string folded(const std::string& s, bool fold) { return fold ? text::lower(s) : s; }

std::optional<int> order(const json& value, const Operand& literal, bool fold) {
    if (literal.is_datetime) {
        if (!value.is_string()) return std::nullopt;
        auto a = time::parse_iso8601(value.get<std::string>());
        auto b = time::parse_iso8601(literal.literal.get<std::string>());
        if (!a || !b) return std::nullopt;
        return *a < *b ? -1 : *a > *b ? 1 : 0;
    }
    const json& l = literal.literal;
    if (value.is_number() && l.is_number()) {
        const double a = value.get<double>(), b = l.get<double>();
        return a < b ? -1 : a > b ? 1 : 0;
    }
    if (value.is_string() && l.is_string()) {
        const int c = folded(value.get<std::string>(), fold).compare(folded(l.get<std::string>(), fold));
        return c < 0 ? -1 : c > 0 ? 1 : 0;
    }
    if (value.is_boolean() && l.is_boolean()) return value.get<bool>() == l.get<bool>() ? 0 : 1;
    return std::nullopt;
}

bool evaluate(const Node& n, const json& doc, bool fold) {
    switch (n.kind) {
        case Node::Kind::and_:
            return evaluate(*n.left, doc, fold) && evaluate(*n.right, doc, fold);
        case Node::Kind::or_:
            return evaluate(*n.left, doc, fold) || evaluate(*n.right, doc, fold);
        case Node::Kind::not_:
            return !evaluate(*n.left, doc, fold);
        case Node::Kind::function: {
            const json* value = resolve(doc, n.a.path);
            if (value == nullptr || !value->is_string()) return false;
            const std::string text = folded(value->get_ref<const std::string&>(), fold);
            const std::string part = folded(n.b.literal.get_ref<const std::string&>(), fold);
            if (n.op == "startswith") return text.rfind(part, 0) == 0;
            if (n.op == "endswith") return text.size() >= part.size() && text.compare(text.size() - part.size(), part.size(), part) == 0;
            return text.find(part) != std::string::npos;
        }
        case Node::Kind::compare:
            break;
    }
    const json* value = resolve(doc, n.a.path);
    const bool absent = value == nullptr || value->is_null();
    if (n.b.literal.is_null() && !n.b.is_datetime) {
        if (n.op == "eq") return absent;
        if (n.op == "ne") return !absent;
        return false;
    }
    if (absent) return n.op == "ne";
    const std::optional<int> c = order(*value, n.b, fold);
    if (!c) return n.op == "ne";
    if (n.op == "eq") return *c == 0;
    if (n.op == "ne") return *c != 0;
    if (n.op == "gt") return *c > 0;
    if (n.op == "ge") return *c >= 0;
    if (n.op == "lt") return *c < 0;
    return *c <= 0;
}

}  // namespace

Filter Filter::parse(std::string_view text, Case strings) {
    if (text.size() > kMaxLength) throw FilterError("$filter: longer than 16 KiB");
    return Filter(Parser(text).parse(), strings == Case::insensitive);
}

bool Filter::matches(const json& doc) const { return evaluate(*root_, doc, fold_); }

}  // namespace bai::odata
