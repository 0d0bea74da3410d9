#include "tools/bai/json_query.h"

#include <memory>
#include <optional>
#include <vector>

#include "tools/bai/cli_error.h"

namespace bai::cli {
namespace {

// Objects keep the order a query builds them in ({State: ..., Name: ...}), as az's OrderedDict.
using ojson = nlohmann::ordered_json;

struct Node;
using NodePtr = std::shared_ptr<Node>;

// An expression is a chain of steps applied left to right; a projection step applies the rest
// of the chain to each item.
struct Step {
    enum Kind { field, index, project, flatten, filter, hash, list } kind;
    std::string name;                                   // field
    long long position = 0;                             // index
    std::vector<std::pair<std::string, NodePtr>> keys;  // hash
    std::vector<NodePtr> items;                         // list
    NodePtr left, right;                                // filter: left op right
    std::string op;
    std::optional<ojson> literal;                        // filter right side as a literal
};

struct Node {
    std::vector<Step> steps;
    NodePtr pipe;  // what follows a '|'
};

class Parser {
public:
    explicit Parser(const std::string& text) : text_(text) {}

    NodePtr parse_all() {
        NodePtr node = parse_expression();
        skip_space();
        if (pos_ != text_.size()) fail("unexpected '" + std::string(1, text_[pos_]) + "'");
        return node;
    }

private:
    [[noreturn]] void fail(const std::string& what) const {
        throw CliError("--query '" + text_ + "': " + what + " at offset " + std::to_string(pos_), kExitUsage);
    }
    void skip_space() {
        while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
    }
    bool eat(char c) {
        skip_space();
        if (pos_ < text_.size() && text_[pos_] == c) {
            ++pos_;
            return true;
        }
        return false;
    }
    bool eat(const std::string& s) {
        skip_space();
        if (text_.compare(pos_, s.size(), s) == 0) {
            pos_ += s.size();
            return true;
        }
        return false;
    }
    char peek() {
        skip_space();
        return pos_ < text_.size() ? text_[pos_] : '\0';
    }

    NodePtr parse_expression() {
        // Nesting is recursion: a bound keeps a hostile expression from exhausting the stack.
        if (++depth_ > kMaxDepth) fail("nested more than " + std::to_string(kMaxDepth) + " levels");
        NodePtr node = parse_chain();
        if (peek() == '|' && text_.compare(pos_, 2, "||") != 0) {
            ++pos_;
            node->pipe = parse_expression();
        }
        --depth_;
        return node;
    }

    std::string parse_identifier() {
        skip_space();
        if (eat('"')) {
            std::string name;
            while (pos_ < text_.size() && text_[pos_] != '"') {
                if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) ++pos_;
                name += text_[pos_++];
            }
            if (!eat('"')) fail("unterminated quoted name");
            return name;
        }
        size_t start = pos_;
        while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) ++pos_;
        if (start == pos_) fail("expected a name");
        return text_.substr(start, pos_ - start);
    }

    // '[' has been seen: an index, a projection, a filter or a multiselect list.
    Step parse_bracket() {
        Step step{};
        skip_space();
        if (eat(']')) {  // [] flattens one level of nested lists, then projects
            step.kind = Step::flatten;
            return step;
        }
        if (eat('*')) {
            if (!eat(']')) fail("expected ']'");
            step.kind = Step::project;
            return step;
        }
        if (eat('?')) {
            step.kind = Step::filter;
            step.left = parse_chain();
            for (const char* op : {"==", "!=", "<=", ">=", "<", ">"}) {
                if (eat(std::string(op))) {
                    step.op = op;
                    break;
                }
            }
            if (step.op.empty()) fail("expected a comparison (== != < <= > >=)");
            if (auto literal = parse_literal()) {
                step.literal = literal;
            } else {
                step.right = parse_chain();
            }
            if (!eat(']')) fail("expected ']' after the filter");
            return step;
        }
        char c = peek();
        if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) {
            size_t start = pos_;
            if (c == '-') ++pos_;
            while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
            step.kind = Step::index;
            try {
                step.position = std::stoll(text_.substr(start, pos_ - start));
            } catch (const std::exception&) {
                fail("bad index");
            }
            if (!eat(']')) fail("expected ']'");
            return step;
        }
        step.kind = Step::list;
        do {
            step.items.push_back(parse_expression());
        } while (eat(','));
        if (!eat(']')) fail("expected ']' to end the list");
        return step;
    }

    Step parse_hash() {
        Step step{};
        step.kind = Step::hash;
        do {
            std::string key = parse_identifier();
            if (!eat(':')) fail("expected ':' after '" + key + "'");
            step.keys.emplace_back(key, parse_expression());
        } while (eat(','));
        if (!eat('}')) fail("expected '}'");
        return step;
    }

    std::optional<ojson> parse_literal() {
        skip_space();
        if (eat('\'')) {
            std::string raw;
            while (pos_ < text_.size() && text_[pos_] != '\'') {
                if (text_[pos_] == '\\' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '\'') ++pos_;
                raw += text_[pos_++];
            }
            if (!eat('\'')) fail("unterminated 'string'");
            return ojson(raw);
        }
        if (eat('`')) {
            size_t end = text_.find('`', pos_);
            if (end == std::string::npos) fail("unterminated `literal`");
            ojson value = ojson::parse(text_.substr(pos_, end - pos_), nullptr, false);
            if (value.is_discarded()) fail("malformed `literal`");
            pos_ = end + 1;
            return value;
        }
        return std::nullopt;
    }

    NodePtr parse_chain() {
        if (++depth_ > kMaxDepth) fail("nested more than " + std::to_string(kMaxDepth) + " levels");
        auto node = std::make_shared<Node>();
        char c = peek();
        if (c == '[') {
            ++pos_;
            node->steps.push_back(parse_bracket());
        } else if (c == '{') {
            ++pos_;
            node->steps.push_back(parse_hash());
        } else if (c == '@') {
            ++pos_;
        } else {
            node->steps.push_back(Step{Step::field, parse_identifier()});
        }
        while (true) {
            c = peek();
            if (c == '.') {
                ++pos_;
                if (eat('{')) {
                    node->steps.push_back(parse_hash());
                } else if (eat('[')) {
                    Step s = parse_bracket();
                    if (s.kind != Step::list) fail("expected a multiselect list after '.'");
                    node->steps.push_back(std::move(s));
                } else if (eat('*')) {
                    fail("'.*' (object projections) is not supported");
                } else {
                    node->steps.push_back(Step{Step::field, parse_identifier()});
                }
            } else if (c == '[') {
                ++pos_;
                node->steps.push_back(parse_bracket());
            } else {
                break;
            }
        }
        --depth_;
        return node;
    }

    static constexpr int kMaxDepth = 64;
    const std::string& text_;
    size_t pos_ = 0;
    int depth_ = 0;
};

ojson evaluate(const Node& node, const ojson& value);

bool compare(const ojson& a, const std::string& op, const ojson& b) {
    if (op == "==") return a == b;
    if (op == "!=") return a != b;
    if (!a.is_number() || !b.is_number()) {
        if (!a.is_string() || !b.is_string()) return false;
    }
    if (op == "<") return a < b;
    if (op == "<=") return a <= b;
    if (op == ">") return a > b;
    return a >= b;
}

// Steps [from, to) on `value`. A projection applies the steps after it to each item up to the
// next flatten ([]), which then flattens the projected list (JMESPath: a[].b[] is one list).
ojson run_steps(const std::vector<Step>& steps, size_t from, size_t to, const ojson& value) {
    ojson current = value;
    for (size_t i = from; i < to; ++i) {
        const Step& step = steps[i];
        if (current.is_null()) return nullptr;
        switch (step.kind) {
            case Step::field:
                current = current.is_object() && current.contains(step.name) ? current[step.name] : ojson();
                break;
            case Step::index: {
                if (!current.is_array()) return nullptr;
                long long n = static_cast<long long>(current.size());
                long long at = step.position < 0 ? n + step.position : step.position;
                current = at >= 0 && at < n ? current[static_cast<size_t>(at)] : ojson();
                break;
            }
            case Step::project:
            case Step::flatten:
            case Step::filter: {
                if (!current.is_array()) return nullptr;
                ojson items = ojson::array();
                for (const ojson& item : current) {
                    if (step.kind == Step::flatten && item.is_array()) {
                        for (const ojson& inner : item) items.push_back(inner);
                    } else {
                        items.push_back(item);
                    }
                }
                size_t end = to;
                for (size_t k = i + 1; k < to; ++k) {
                    if (steps[k].kind == Step::flatten) {
                        end = k;
                        break;
                    }
                }
                ojson out = ojson::array();
                for (const ojson& item : items) {
                    if (step.kind == Step::filter) {
                        ojson left = evaluate(*step.left, item);
                        ojson right = step.literal ? *step.literal : evaluate(*step.right, item);
                        if (!compare(left, step.op, right)) continue;
                    }
                    ojson projected = run_steps(steps, i + 1, end, item);
                    if (!projected.is_null()) out.push_back(std::move(projected));
                }
                return end == to ? out : run_steps(steps, end, to, out);
            }
            case Step::hash: {
                ojson out = ojson::object();
                for (const auto& [key, expression] : step.keys) out[key] = evaluate(*expression, current);
                current = std::move(out);
                break;
            }
            case Step::list: {
                ojson out = ojson::array();
                for (const NodePtr& expression : step.items) out.push_back(evaluate(*expression, current));
                current = std::move(out);
                break;
            }
        }
    }
    return current;
}

ojson evaluate(const Node& node, const ojson& value) {
    ojson result = run_steps(node.steps, 0, node.steps.size(), value);
    return node.pipe ? evaluate(*node.pipe, result) : result;
}

}  // namespace

ojson query_json(const ojson& document, const std::string& expression) {
    Parser parser(expression);
    NodePtr node = parser.parse_all();
    return evaluate(*node, document);
}

}  // namespace bai::cli
