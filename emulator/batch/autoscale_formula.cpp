#include "emulator/batch/autoscale_formula.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <vector>

namespace bai::batch {
namespace {

struct FormulaError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct Value {
    enum Kind { number, vector, text } kind = number;
    double n = 0;
    std::vector<double> v;
    std::string s;
    // A number that is a time interval (in seconds): GetSample(N) takes N samples, GetSample(an
    // interval) the samples of that interval.
    bool interval = false;

    static Value num(double d) { return {number, d, {}, {}, false}; }
    static Value span(double seconds) { return {number, seconds, {}, {}, true}; }
    static Value vec(std::vector<double> d) { return {vector, 0, std::move(d), {}, false}; }
    static Value str(std::string t) { return {text, 0, {}, std::move(t), false}; }
};

// Seconds in each of the service's time interval constants.
const std::map<std::string, double> kIntervals = {
    {"TimeInterval_Zero", 0},         {"TimeInterval_100ns", 1e-7},  {"TimeInterval_Microsecond", 1e-6},
    {"TimeInterval_Millisecond", 1e-3}, {"TimeInterval_Second", 1},  {"TimeInterval_Minute", 60},
    {"TimeInterval_Hour", 3600},      {"TimeInterval_Day", 86400},   {"TimeInterval_Week", 604800},
    {"TimeInterval_Year", 31536000}};
const char* const kDeallocations[] = {"requeue", "terminate", "taskcompletion", "retaineddata"};

std::string show(const Value& v) {
    char text[64];
    if (v.kind == Value::text) return v.s;
    if (v.kind == Value::number) {
        std::snprintf(text, sizeof text, "%.15g", v.n);
        return text;
    }
    std::string out = "{";
    for (size_t i = 0; i < v.v.size(); ++i) {
        std::snprintf(text, sizeof text, "%.15g", v.v[i]);
        out += (i ? ", " : "") + std::string(text);
    }
    return out + "}";
}

class Evaluator {
public:
    Evaluator(const std::string& text, const AutoScaleInputs& inputs) : text_(text), inputs_(inputs) {}

    AutoScaleResult run() {
        AutoScaleResult result;
        result.deallocation = "requeue";
        try {
            skip_separators();
            while (pos_ < text_.size()) {
                statement();
                skip_space();
                if (pos_ < text_.size() && text_[pos_] != ';' && text_[pos_] != '\n') fail("';' after a statement");
                skip_separators();
            }
        } catch (const FormulaError& e) {
            result.error = e.what();
            return result;
        } catch (const std::exception&) {  // a number std::stod refuses
            result.error = "position " + std::to_string(pos_ + 1) + ": expected a number";
            return result;
        }
        std::string own;  // the formula's variables, in the order first assigned
        for (const std::string& name : order_) {
            const Value& v = vars_.at(name);
            if (name != "$TargetDedicatedNodes" && name != "$TargetLowPriorityNodes" && name != "$NodeDeallocationOption") {
                own += ";" + name + "=" + show(v);
            }
            auto as_target = [&](const char* what) -> std::optional<int> {
                if (v.kind != Value::number || !std::isfinite(v.n)) {
                    result.error = std::string(what) + " must be a number, got " + show(v);
                    return std::nullopt;
                }
                return std::max(0, static_cast<int>(std::lround(v.n)));
            };
            if (name == "$TargetDedicatedNodes") result.target_dedicated = as_target("$TargetDedicatedNodes");
            if (name == "$TargetLowPriorityNodes") result.target_low_priority = as_target("$TargetLowPriorityNodes");
            if (name == "$NodeDeallocationOption") result.deallocation = show(v);
        }
        // As the service reports a run: the targets and the deallocation option first (the pool's
        // present targets and requeue where the formula sets none), then the formula's own.
        auto target = [&](const std::optional<int>& set, const char* metric) {
            if (set) return std::to_string(*set);
            auto it = inputs_.metrics.find(metric);
            return std::to_string(it == inputs_.metrics.end() ? 0 : static_cast<int>(std::lround(it->second)));
        };
        result.results = "$TargetDedicatedNodes=" + target(result.target_dedicated, "$TargetDedicatedNodes") +
                         ";$TargetLowPriorityNodes=" + target(result.target_low_priority, "$TargetLowPriorityNodes") +
                         ";$NodeDeallocationOption=" + result.deallocation + own;
        return result;
    }

private:
    [[noreturn]] void fail(const std::string& expected) const {
        std::string got = pos_ < text_.size() ? "'" + text_.substr(pos_, 12) + "'" : "the end";
        throw FormulaError("position " + std::to_string(pos_ + 1) + ": expected " + expected + ", got " + got);
    }
    void skip_space() {
        while (pos_ < text_.size()) {
            if (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\r') {
                ++pos_;
            } else if (text_.compare(pos_, 2, "//") == 0) {
                while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
            } else {
                break;
            }
        }
    }
    void skip_separators() {
        while (true) {
            skip_space();
            if (pos_ < text_.size() && (text_[pos_] == ';' || text_[pos_] == '\n')) {
                ++pos_;
            } else {
                return;
            }
        }
    }
    bool eat(const std::string& token) {
        skip_space();
        if (text_.compare(pos_, token.size(), token) != 0) return false;
        // "=" is not the start of "==", "<" not of "<=".
        if ((token == "=" || token == "<" || token == ">" || token == "!") && pos_ + 1 < text_.size() && text_[pos_ + 1] == '=') {
            return false;
        }
        pos_ += token.size();
        return true;
    }
    std::string identifier() {
        skip_space();
        size_t start = pos_;
        if (pos_ < text_.size() && text_[pos_] == '$') ++pos_;
        while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) ++pos_;
        if (pos_ == start || (pos_ == start + 1 && text_[start] == '$')) {
            pos_ = start;
            fail("a name");
        }
        return text_.substr(start, pos_ - start);
    }

    void statement() {
        std::string name = identifier();
        if (!eat("=")) fail("'=' after " + name);
        Value v = expression();
        if (name == "$NodeDeallocationOption" &&
            (v.kind != Value::text || std::find(std::begin(kDeallocations), std::end(kDeallocations), v.s) == std::end(kDeallocations))) {
            throw FormulaError("$NodeDeallocationOption is requeue, terminate, taskcompletion or retaineddata, got " + show(v));
        }
        if (!vars_.count(name)) order_.push_back(name);
        vars_[name] = std::move(v);
    }

    Value expression() {
        Value condition = logical_or();
        if (!eat("?")) return condition;
        Value yes = expression();
        if (!eat(":")) fail("':' of a conditional");
        Value no = expression();
        return truth(condition) ? yes : no;
    }
    Value logical_or() {
        Value left = logical_and();
        while (eat("||")) {
            Value right = logical_and();
            left = Value::num(truth(left) || truth(right) ? 1 : 0);
        }
        return left;
    }
    Value logical_and() {
        Value left = equality();
        while (eat("&&")) {
            Value right = equality();
            left = Value::num(truth(left) && truth(right) ? 1 : 0);
        }
        return left;
    }
    Value equality() {
        Value left = relation();
        while (true) {
            if (eat("==")) {
                left = compare(left, relation(), [](double a, double b) { return a == b; });
            } else if (eat("!=")) {
                left = compare(left, relation(), [](double a, double b) { return a != b; });
            } else {
                return left;
            }
        }
    }
    Value relation() {
        Value left = sum();
        while (true) {
            if (eat("<=")) {
                left = compare(left, sum(), [](double a, double b) { return a <= b; });
            } else if (eat(">=")) {
                left = compare(left, sum(), [](double a, double b) { return a >= b; });
            } else if (eat("<")) {
                left = compare(left, sum(), [](double a, double b) { return a < b; });
            } else if (eat(">")) {
                left = compare(left, sum(), [](double a, double b) { return a > b; });
            } else {
                return left;
            }
        }
    }
    Value sum() {
        Value left = product();
        while (true) {
            if (eat("+")) {
                left = arithmetic(left, product(), [](double a, double b) { return a + b; });
            } else if (eat("-")) {
                left = arithmetic(left, product(), [](double a, double b) { return a - b; });
            } else {
                return left;
            }
        }
    }
    Value product() {
        Value left = unary();
        while (true) {
            if (eat("*")) {
                left = arithmetic(left, unary(), [](double a, double b) { return a * b; });
            } else if (eat("/")) {
                Value right = unary();
                const bool ratio = left.interval && right.interval;  // an interval over an interval: a number
                left = arithmetic(left, right, [](double a, double b) { return a / b; });
                left.interval = left.interval && !ratio;
            } else if (eat("%")) {
                left = arithmetic(left, unary(), [](double a, double b) { return std::fmod(a, b); });
            } else {
                return left;
            }
        }
    }
    Value unary() {
        if (eat("-")) return arithmetic(Value::num(0), unary(), [](double a, double b) { return a - b; });
        if (eat("+")) return unary();
        if (eat("!")) return Value::num(truth(unary()) ? 0 : 1);
        return postfix();
    }
    Value postfix() {
        std::optional<std::string> metric;
        Value v = primary(metric);
        while (eat(".")) {
            std::string method = identifier();
            std::vector<Value> args = arguments();
            if (!metric) throw FormulaError(method + " applies to a service metric ($PendingTasks, ...)");
            v = sample_method(*metric, method, args);
            metric.reset();
        }
        return v;
    }
    // The metric's samples, newest first, as (age in seconds, value): the present one, then the
    // history kept.
    std::vector<std::pair<double, double>> samples_of(const std::string& metric) const {
        std::vector<std::pair<double, double>> out;
        auto present = inputs_.metrics.find(metric);
        out.emplace_back(0, present == inputs_.metrics.end() ? 0 : present->second);
        if (inputs_.history) {
            for (const MetricSample& sample : *inputs_.history) {
                if (auto it = sample.values.find(metric); it != sample.values.end()) out.emplace_back(inputs_.now - sample.time, it->second);
            }
        }
        return out;
    }
    // The window of GetSample/GetSamplePercent arguments: (interval) is the last interval,
    // (start, end) the samples between start and end ago; a trailing number is a percentage.
    struct Window {
        double from = 0, to = 0;  // ages, from <= to
        std::optional<double> percent;
    };
    static Window window_of(const std::string& method, const std::vector<Value>& args) {
        std::vector<double> spans;
        Window w;
        for (const Value& a : args) {
            if (a.kind != Value::number) throw FormulaError(method + " takes time intervals and a percentage, got " + show(a));
            if (a.interval) {
                spans.push_back(a.n);
            } else if (!w.percent && !spans.empty()) {
                w.percent = a.n;
            } else {
                throw FormulaError(method + ": " + show(a) + " is not a time interval (TimeInterval_Minute * 5, ...)");
            }
        }
        if (spans.empty() || spans.size() > 2) throw FormulaError(method + " takes one or two time intervals");
        w.to = spans[0];
        if (spans.size() == 2) w.from = spans[1];
        if (w.from > w.to) std::swap(w.from, w.to);
        return w;
    }
    // How much of the window the kept samples cover, in percent.
    double coverage(const std::vector<std::pair<double, double>>& samples, const Window& w) const {
        const double expected = std::max(1.0, std::floor((w.to - w.from) / inputs_.sample_period));
        double found = 0;
        for (const auto& [age, value] : samples) found += age >= w.from && age <= w.to ? 1 : 0;
        return std::min(100.0, 100.0 * found / expected);
    }
    Value sample_method(const std::string& metric, const std::string& method, const std::vector<Value>& args) const {
        std::vector<std::pair<double, double>> samples = samples_of(metric);
        if (method == "GetSample") {
            std::vector<double> out;
            if (args.size() == 1 && args[0].kind == Value::number && !args[0].interval) {
                if (args[0].n < 1) throw FormulaError("GetSample(count) takes a count of 1 or more");
                for (size_t i = 0; i < samples.size() && static_cast<double>(i) < args[0].n; ++i) out.push_back(samples[i].second);
                return Value::vec(out);
            }
            Window w = window_of(method, args);
            if (w.percent && !inputs_.lenient_samples && coverage(samples, w) < *w.percent) {
                throw FormulaError("GetSample: " + show(Value::num(coverage(samples, w))) + "% of " + metric +
                                   "'s samples are available over the interval, " + show(Value::num(*w.percent)) + "% asked");
            }
            for (const auto& [age, value] : samples) {
                if (age >= w.from && age <= w.to) out.push_back(value);
            }
            return Value::vec(out);
        }
        if (method == "GetSamplePercent") return Value::num(coverage(samples, window_of(method, args)));
        if (method == "Count") return Value::num(static_cast<double>(samples.size()));
        if (method == "GetSamplePeriod") return Value::span(inputs_.sample_period);
        if (method == "HistoryBeginTime") return Value::span(samples.back().first);
        throw FormulaError("unknown method " + method + " of " + metric);
    }
    std::vector<Value> arguments() {
        if (!eat("(")) fail("'('");
        std::vector<Value> args;
        if (eat(")")) return args;
        do {
            args.push_back(expression());
        } while (eat(","));
        if (!eat(")")) fail("')' or ','");
        return args;
    }
    Value primary(std::optional<std::string>& metric) {
        skip_space();
        if (eat("(")) {
            Value v = expression();
            if (!eat(")")) fail("')'");
            return v;
        }
        if (pos_ < text_.size() && (std::isdigit(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '.')) {
            size_t used = 0;
            double d = std::stod(text_.substr(pos_), &used);
            pos_ += used;
            return Value::num(d);
        }
        if (pos_ < text_.size() && text_[pos_] == '"') {
            size_t end = text_.find('"', pos_ + 1);
            if (end == std::string::npos) fail("a closing '\"'");
            std::string s = text_.substr(pos_ + 1, end - pos_ - 1);
            pos_ = end + 1;
            return Value::str(s);
        }
        std::string name = identifier();
        skip_space();
        if (pos_ < text_.size() && text_[pos_] == '(') return call(name, arguments());
        if (auto it = vars_.find(name); it != vars_.end()) return it->second;
        if (auto it = kIntervals.find(name); it != kIntervals.end()) return Value::span(it->second);
        if (std::find(std::begin(kDeallocations), std::end(kDeallocations), name) != std::end(kDeallocations)) return Value::str(name);
        if (name == "true") return Value::num(1);
        if (name == "false") return Value::num(0);
        if (auto it = inputs_.metrics.find(name); it != inputs_.metrics.end()) {
            metric = name;
            return Value::num(it->second);
        }
        throw FormulaError("unknown name " + name);
    }

    Value call(const std::string& name, std::vector<Value> args) {
        std::vector<double> all;
        for (const Value& a : args) {
            if (a.kind == Value::text) throw FormulaError(name + " takes numbers, got " + show(a));
            if (a.kind == Value::number) all.push_back(a.n);
            all.insert(all.end(), a.v.begin(), a.v.end());
        }
        auto need = [&](size_t count) {
            if (all.size() < count) throw FormulaError(name + " needs " + std::to_string(count) + " value(s)");
        };
        auto one = [&](double (*f)(double)) {
            need(1);
            if (args.size() == 1 && args[0].kind == Value::vector) {
                std::vector<double> out;
                for (double d : args[0].v) out.push_back(f(d));
                return Value::vec(out);
            }
            return Value::num(f(all[0]));
        };
        if (name == "min") return need(1), Value::num(*std::min_element(all.begin(), all.end()));
        if (name == "max") return need(1), Value::num(*std::max_element(all.begin(), all.end()));
        if (name == "sum") return Value::num(std::accumulate(all.begin(), all.end(), 0.0));
        if (name == "avg") return need(1), Value::num(std::accumulate(all.begin(), all.end(), 0.0) / static_cast<double>(all.size()));
        if (name == "count" || name == "len") return Value::num(static_cast<double>(all.size()));
        if (name == "median" || name == "percentile") {
            need(1);
            double p = 50;
            if (name == "percentile") {
                need(2);
                p = all.back();
                all.pop_back();
            }
            std::sort(all.begin(), all.end());
            size_t index = static_cast<size_t>(std::clamp(p, 0.0, 100.0) / 100 * static_cast<double>(all.size() - 1) + 0.5);
            return Value::num(all[index]);
        }
        if (name == "std") {
            need(1);
            double mean = std::accumulate(all.begin(), all.end(), 0.0) / static_cast<double>(all.size());
            double sq = 0;
            for (double d : all) sq += (d - mean) * (d - mean);
            return Value::num(std::sqrt(sq / static_cast<double>(all.size())));
        }
        if (name == "pow") return need(2), Value::num(std::pow(all[0], all[1]));
        if (name == "sqrt") return one([](double d) { return std::sqrt(d); });
        if (name == "ln") return one([](double d) { return std::log(d); });
        if (name == "lg") return one([](double d) { return std::log2(d); });
        if (name == "log") return one([](double d) { return std::log10(d); });
        if (name == "floor") return one([](double d) { return std::floor(d); });
        if (name == "ceil") return one([](double d) { return std::ceil(d); });
        if (name == "round") return one([](double d) { return std::round(d); });
        if (name == "abs") return one([](double d) { return std::fabs(d); });
        if (name == "time") return Value::num(0);
        throw FormulaError("unknown function " + name);
    }

    static bool truth(const Value& v) {
        if (v.kind == Value::text) return !v.s.empty();
        if (v.kind == Value::vector) return !v.v.empty();
        return v.n != 0;
    }
    template <typename F>
    static Value arithmetic(const Value& a, const Value& b, F f) {
        if (a.kind == Value::text || b.kind == Value::text) throw FormulaError("arithmetic on text: " + show(a) + ", " + show(b));
        if (a.kind == Value::number && b.kind == Value::number) {
            Value out = Value::num(f(a.n, b.n));
            out.interval = a.interval || b.interval;
            return out;
        }
        std::vector<double> out;
        if (a.kind == Value::vector && b.kind == Value::vector) {
            if (a.v.size() != b.v.size()) throw FormulaError("vectors of different lengths");
            for (size_t i = 0; i < a.v.size(); ++i) out.push_back(f(a.v[i], b.v[i]));
        } else if (a.kind == Value::vector) {
            for (double d : a.v) out.push_back(f(d, b.n));
        } else {
            for (double d : b.v) out.push_back(f(a.n, d));
        }
        return Value::vec(out);
    }
    template <typename F>
    static Value compare(const Value& a, const Value& b, F f) {
        if (a.kind == Value::text && b.kind == Value::text) return Value::num(f(a.s.compare(b.s), 0) ? 1 : 0);
        if (a.kind != Value::number || b.kind != Value::number) {
            throw FormulaError("comparisons take two numbers or two strings: " + show(a) + ", " + show(b));
        }
        return Value::num(f(a.n, b.n) ? 1 : 0);
    }

    const std::string& text_;
    const AutoScaleInputs& inputs_;
    size_t pos_ = 0;
    std::map<std::string, Value> vars_;
    std::vector<std::string> order_;
};

}  // namespace

AutoScaleInputs metrics_at(double value) {
    AutoScaleInputs in;
    in.lenient_samples = true;
    for (const char* name : {"$PendingTasks", "$ActiveTasks", "$RunningTasks", "$SucceededTasks", "$FailedTasks",
                             "$CurrentDedicatedNodes", "$CurrentLowPriorityNodes", "$PreemptedNodeCount", "$UsableNodeCount",
                             "$TargetDedicatedNodes", "$TargetLowPriorityNodes", "$CPUPercent", "$MemoryBytes", "$DiskBytes",
                             "$DiskReadBytes", "$DiskWriteBytes", "$DiskReadOps", "$DiskWriteOps", "$NetworkInBytes",
                             "$NetworkOutBytes", "$SampleNodeCount"}) {
        in.metrics[name] = value;
    }
    return in;
}

AutoScaleResult evaluate_autoscale(const std::string& formula, const AutoScaleInputs& inputs) {
    return Evaluator(formula, inputs).run();
}

}  // namespace bai::batch
