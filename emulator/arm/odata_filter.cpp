#include "emulator/arm/odata_filter.h"

#include <cctype>
#include <memory>
#include <optional>
#include <vector>

#include "common/text/ascii.h"

namespace bai::arm {

using nlohmann::json;

namespace {

// The value at a path ("properties/provisioningState"), or null.
json value_at(const json& document, const std::string& path) {
    const json* at = &document;
    size_t start = 0;
    while (start <= path.size()) {
        size_t slash = path.find('/', start);
        const std::string name = path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
        if (!at->is_object() || !at->contains(name)) return nullptr;
        at = &(*at)[name];
        if (slash == std::string::npos) break;
        start = slash + 1;
    }
    return *at;
}

// -1, 0, 1; nullopt when the two cannot be ordered (a string and a number, say).
std::optional<int> compare(const json& a, const json& b) {
    if (a.is_string() && b.is_string()) {
        const std::string x = text::lower(a.get<std::string>()), y = text::lower(b.get<std::string>());
        return x < y ? -1 : x > y ? 1 : 0;
    }
    if (a.is_number() && b.is_number()) {
        const double x = a.get<double>(), y = b.get<double>();
        return x < y ? -1 : x > y ? 1 : 0;
    }
    if (a.is_boolean() && b.is_boolean()) return a.get<bool>() == b.get<bool>() ? 0 : 1;
    if (a.is_null() || b.is_null()) return a.is_null() && b.is_null() ? 0 : 1;
    return std::nullopt;
}

class Parser {
public:
    explicit Parser(const std::string& text) : text_(text) {}

    DocumentFilter parse() {
        DocumentFilter f = disjunction();
        skip_space();
        if (pos_ != text_.size()) fail("the end of the filter");
        return f;
    }

private:
    [[noreturn]] void fail(const std::string& expected) const {
        throw FilterError("$filter: expected " + expected + " at position " + std::to_string(pos_ + 1) + " of '" + text_ + "'");
    }
    void skip_space() {
        while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    }
    // A keyword (and, or, not, eq, ...) followed by a space or a parenthesis.
    bool keyword(const char* word) {
        skip_space();
        const std::string w = word;
        if (text_.size() - pos_ < w.size() || !text::iequals(text_.substr(pos_, w.size()), w)) return false;
        const size_t end = pos_ + w.size();
        if (end < text_.size() && !std::isspace(static_cast<unsigned char>(text_[end])) && text_[end] != '(') return false;
        pos_ = end;
        return true;
    }
    bool eat(char c) {
        skip_space();
        if (pos_ < text_.size() && text_[pos_] == c) {
            ++pos_;
            return true;
        }
        return false;
    }
    DocumentFilter disjunction() {
        DocumentFilter left = conjunction();
        while (keyword("or")) {
            DocumentFilter right = conjunction();
            left = [left, right](const json& d) { return left(d) || right(d); };
        }
        return left;
    }
    DocumentFilter conjunction() {
        DocumentFilter left = negation();
        while (keyword("and")) {
            DocumentFilter right = negation();
            left = [left, right](const json& d) { return left(d) && right(d); };
        }
        return left;
    }
    DocumentFilter negation() {
        // Nesting is bounded, so that no filter can exhaust the stack of the thread parsing it.
        if (++depth_ > kMaxDepth) fail("at most " + std::to_string(kMaxDepth) + " nested 'not' and parentheses");
        DocumentFilter result;
        if (keyword("not")) {
            DocumentFilter inner = negation();
            result = [inner](const json& d) { return !inner(d); };
        } else if (eat('(')) {
            result = disjunction();
            if (!eat(')')) fail("')'");
        } else {
            result = predicate();
        }
        --depth_;
        return result;
    }
    std::string path() {
        skip_space();
        const size_t start = pos_;
        while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '/' ||
                                       text_[pos_] == '_' || text_[pos_] == '.')) {
            ++pos_;
        }
        if (pos_ == start) fail("a property path");
        return text_.substr(start, pos_ - start);
    }
    json literal() {
        skip_space();
        if (eat('\'')) {
            std::string s;
            while (true) {
                if (pos_ >= text_.size()) fail("a closing quote");
                if (text_[pos_] == '\'') {
                    if (pos_ + 1 < text_.size() && text_[pos_ + 1] == '\'') {
                        s += '\'';
                        pos_ += 2;
                        continue;
                    }
                    ++pos_;
                    return s;
                }
                s += text_[pos_++];
            }
        }
        if (keyword("true")) return true;
        if (keyword("false")) return false;
        if (keyword("null")) return nullptr;
        const size_t start = pos_;
        if (pos_ < text_.size() && (text_[pos_] == '-' || text_[pos_] == '+')) ++pos_;
        while (pos_ < text_.size() && (std::isdigit(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '.')) ++pos_;
        if (pos_ == start) fail("a literal ('text', a number, true, false or null)");
        try {
            return std::stod(text_.substr(start, pos_ - start));
        } catch (const std::exception&) {
            pos_ = start;
            fail("a number");
        }
    }
    DocumentFilter predicate() {
        skip_space();
        for (const char* function : {"startswith", "endswith", "contains"}) {
            const size_t start = pos_;
            if (!keyword(function) || !eat('(')) {
                pos_ = start;
                continue;
            }
            const std::string p = path();
            if (!eat(',')) fail("','");
            json needle = literal();
            if (!needle.is_string()) fail("a 'string'");
            if (!eat(')')) fail("')'");
            const std::string n = text::lower(needle.get<std::string>()), name = function;
            return [p, n, name](const json& d) {
                json v = value_at(d, p);
                if (!v.is_string()) return false;
                const std::string s = text::lower(v.get<std::string>());
                if (name == "startswith") return s.rfind(n, 0) == 0;
                if (name == "endswith") return s.size() >= n.size() && s.compare(s.size() - n.size(), n.size(), n) == 0;
                return s.find(n) != std::string::npos;
            };
        }
        const std::string p = path();
        std::string op;
        for (const char* candidate : {"eq", "ne", "gt", "ge", "lt", "le"}) {
            if (keyword(candidate)) {
                op = candidate;
                break;
            }
        }
        if (op.empty()) fail("eq, ne, gt, ge, lt or le");
        const json right = literal();
        return [p, op, right](const json& d) {
            std::optional<int> c = compare(value_at(d, p), right);
            if (op == "eq") return c == 0;
            if (op == "ne") return c != 0;
            if (!c) return false;
            if (op == "gt") return *c > 0;
            if (op == "ge") return *c >= 0;
            if (op == "lt") return *c < 0;
            return *c <= 0;
        };
    }

    static constexpr int kMaxDepth = 64;
    const std::string& text_;
    size_t pos_ = 0;
    int depth_ = 0;
};

}  // namespace

DocumentFilter parse_odata_filter(const std::string& text) { return Parser(text).parse(); }

json select_paths(const json& document, const std::string& select) {
    json out = json::object();
    if (document.contains("id")) out["id"] = document["id"];
    size_t start = 0;
    while (start <= select.size()) {
        size_t comma = select.find(',', start);
        std::string path = select.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        while (!path.empty() && std::isspace(static_cast<unsigned char>(path.front()))) path.erase(path.begin());
        while (!path.empty() && std::isspace(static_cast<unsigned char>(path.back()))) path.pop_back();
        if (path.empty()) throw FilterError("$select: an empty property path in '" + select + "'");
        json value = value_at(document, path);
        if (!value.is_null()) {
            json* at = &out;
            size_t from = 0;
            for (size_t slash = path.find('/'); slash != std::string::npos; slash = path.find('/', from)) {
                at = &(*at)[path.substr(from, slash - from)];
                from = slash + 1;
            }
            (*at)[path.substr(from)] = value;
        }
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return out;
}

}  // namespace bai::arm
