#include "scenarios/replay/expectation.h"

namespace bai::scenarios {

using nlohmann::json;

namespace {

bool contains(const json& actual, const json& wanted) {
    if (actual.is_string()) return wanted.is_string() && actual.get<std::string>().find(wanted.get<std::string>()) != std::string::npos;
    if (actual.is_array()) {
        for (const json& item : actual) {
            if (item == wanted) return true;
        }
        return false;
    }
    if (actual.is_object()) return wanted.is_string() && actual.contains(wanted.get<std::string>());
    return false;
}

// Orders numbers with numbers and strings with strings; nullopt for anything else.
std::optional<int> order(const json& a, const json& b) {
    if (a.is_number() && b.is_number()) {
        double x = a.get<double>(), y = b.get<double>();
        return x < y ? -1 : (x > y ? 1 : 0);
    }
    if (a.is_string() && b.is_string()) return a.get<std::string>().compare(b.get<std::string>());
    return std::nullopt;
}

}  // namespace

bool holds(const std::optional<json>& actual, const Comparison& c) {
    if (c.op == "exists") return actual.has_value();
    if (c.op == "absent") return !actual.has_value();
    if (!actual) return false;
    if (c.op == "==") return *actual == c.value;
    if (c.op == "!=") return *actual != c.value;
    if (c.op == "contains") return contains(*actual, c.value);
    std::optional<int> o = order(*actual, c.value);
    if (!o) return false;
    if (c.op == "<") return *o < 0;
    if (c.op == "<=") return *o <= 0;
    if (c.op == ">") return *o > 0;
    if (c.op == ">=") return *o >= 0;
    return false;
}

std::string describe(const Comparison& c) {
    if (c.op == "exists" || c.op == "absent") return c.op;
    return c.op + " " + c.value.dump();
}

std::string describe(const std::optional<json>& actual) {
    if (!actual) return "absent";
    std::string text = actual->dump();
    if (text.size() > 400) text = text.substr(0, 400) + "...";
    return text;
}

}  // namespace bai::scenarios
