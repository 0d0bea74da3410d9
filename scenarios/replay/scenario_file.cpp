#include "scenarios/replay/scenario_file.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <set>

namespace bai::scenarios {
namespace {

using nlohmann::json;

const std::set<std::string> kKeywords = {"name", "seed", "emulator", "set", "workload", "request", "expect",
                                         "capture", "advance", "wait", "fault"};
const std::set<std::string> kMethods = {"GET", "PUT", "POST", "PATCH", "DELETE", "HEAD"};
const std::set<std::string> kEndpoints = {"arm", "blob", "file", "batch"};
const std::set<std::string> kOperators = {"==", "!=", "<", "<=", ">", ">=", "contains", "exists", "absent"};

// One line, read word by word; "quoted words" may hold spaces and \" \\ escapes.
class Cursor {
public:
    Cursor(std::string_view line, Where where) : line_(line), where_(std::move(where)) {}

    [[noreturn]] void fail(const std::string& expected) const {
        std::string got = at_end() ? "the end of the line" : "'" + std::string(rest()) + "'";
        throw ScenarioError(where_, "expected " + expected + ", got " + got);
    }
    void skip_space() {
        while (pos_ < line_.size() && std::isspace(static_cast<unsigned char>(line_[pos_]))) ++pos_;
    }
    bool at_end() const {
        size_t p = pos_;
        while (p < line_.size() && std::isspace(static_cast<unsigned char>(line_[p]))) ++p;
        return p >= line_.size();
    }
    std::string_view rest() const {
        size_t p = pos_;
        while (p < line_.size() && std::isspace(static_cast<unsigned char>(line_[p]))) ++p;
        return line_.substr(p);
    }
    std::optional<std::string> word() {
        skip_space();
        if (pos_ >= line_.size()) return std::nullopt;
        if (line_[pos_] == '"') {
            std::string out;
            ++pos_;
            while (pos_ < line_.size() && line_[pos_] != '"') {
                if (line_[pos_] == '\\' && pos_ + 1 < line_.size()) ++pos_;
                out += line_[pos_++];
            }
            if (pos_ >= line_.size()) throw ScenarioError(where_, "unterminated quoted text");
            ++pos_;
            return out;
        }
        size_t start = pos_;
        while (pos_ < line_.size() && !std::isspace(static_cast<unsigned char>(line_[pos_]))) ++pos_;
        return std::string(line_.substr(start, pos_ - start));
    }
    std::string need(const std::string& expected) {
        auto w = word();
        if (!w) fail(expected);
        return *w;
    }
    void need_literal(const std::string& literal) {
        size_t saved = pos_;
        auto w = word();
        if (!w || *w != literal) {
            pos_ = saved;
            fail("'" + literal + "'");
        }
    }
    bool peek_literal(const std::string& literal) {
        size_t saved = pos_;
        auto w = word();
        if (w && *w == literal) return true;
        pos_ = saved;
        return false;
    }
    std::string need_one_of(const std::set<std::string>& allowed, const std::string& what) {
        size_t saved = pos_;
        std::string w = need(what);
        if (!allowed.count(w)) {
            pos_ = saved;
            std::string list;
            for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
            fail(what + " (" + list + ")");
        }
        return w;
    }
    long long need_integer(const std::string& what) {
        size_t saved = pos_;
        std::string w = need(what);
        if (w.empty() || w.size() > 12 || w.find_first_not_of("0123456789") != std::string::npos) {
            pos_ = saved;
            fail(what);
        }
        return std::stoll(w);
    }
    Duration need_duration(const std::string& what) {
        size_t saved = pos_;
        std::string w = need(what);
        auto d = parse_duration(w);
        if (!d) {
            pos_ = saved;
            fail(what + " (a duration such as 250ms, 30s, 5m, 1h30m, 7d)");
        }
        return *d;
    }
    // A JSON value: "a string", {...}, [...] (brackets balanced, strings respected), or a bare
    // number, true, false, null.
    json need_json(const std::string& what) {
        skip_space();
        size_t start = pos_;
        if (pos_ >= line_.size()) fail(what);
        char c = line_[pos_];
        if (c == '"') {
            skip_string();
        } else if (c == '{' || c == '[') {
            int depth = 0;
            while (pos_ < line_.size()) {
                char d = line_[pos_];
                if (d == '"') {
                    skip_string();
                    continue;
                }
                if (d == '{' || d == '[') ++depth;
                if (d == '}' || d == ']') --depth;
                ++pos_;
                if (depth == 0) break;
            }
        } else {
            while (pos_ < line_.size() && !std::isspace(static_cast<unsigned char>(line_[pos_]))) ++pos_;
        }
        json value = json::parse(line_.substr(start, pos_ - start), nullptr, false);
        if (value.is_discarded()) {
            pos_ = start;
            fail(what + " (a JSON value: \"text\", 42, true, null, {...} or [...])");
        }
        return value;
    }
    void need_end() {
        if (!at_end()) fail("the end of the line");
    }

private:
    void skip_string() {
        ++pos_;
        while (pos_ < line_.size() && line_[pos_] != '"') {
            if (line_[pos_] == '\\') ++pos_;
            ++pos_;
        }
        if (pos_ >= line_.size()) throw ScenarioError(where_, "unterminated string");
        ++pos_;
    }

    std::string_view line_;
    Where where_;
    size_t pos_ = 0;
};

Comparison need_comparison(Cursor& c) {
    Comparison cmp;
    cmp.op = c.need_one_of(kOperators, "a comparison");
    if (cmp.op != "exists" && cmp.op != "absent") cmp.value = c.need_json("a value to compare with");
    return cmp;
}

RequestStep need_request(Cursor& c) {
    RequestStep r;
    r.method = c.need_one_of(kMethods, "an HTTP method");
    r.endpoint = c.need_one_of(kEndpoints, "an endpoint");
    r.target = c.need("a path");
    // A path, or a variable holding one (a captured Azure-AsyncOperation URL, say).
    if (r.target.empty() || (r.target[0] != '/' && r.target.rfind("${", 0) != 0)) c.fail("a path starting with '/'");
    return r;
}

class Parser {
public:
    Parser(std::string_view text, const std::string& file) : file_(file) {
        size_t start = 0;
        while (start <= text.size()) {
            size_t end = text.find('\n', start);
            std::string_view line = text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
            if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
            lines_.push_back(line);
            if (end == std::string_view::npos) break;
            start = end + 1;
        }
    }

    Scenario parse() {
        Scenario s;
        s.file = file_;
        while (next_ < lines_.size()) {
            std::string_view line = lines_[next_++];
            Where where{file_, static_cast<int>(next_)};
            Cursor c(line, where);
            auto first = c.word();
            if (!first || (*first)[0] == '#') continue;
            const std::string& k = *first;
            if (k == "name") {
                s.name = std::string(c.rest());
                if (s.name.empty()) c.fail("a name");
            } else if (k == "seed") {
                s.seed = static_cast<std::uint64_t>(c.need_integer("a seed (a number)"));
                c.need_end();
            } else if (k == "emulator") {
                while (auto w = c.word()) s.emulator_args.push_back(*w);
            } else if (k == "set") {
                SetStep set{c.need("a variable name"), ""};
                c.need_literal("=");
                // The rest of the line (a JSON fragment may hold spaces), or one "quoted word".
                std::string rest(c.rest());
                if (rest.empty()) c.fail("a value");
                Cursor probe = c;
                if (rest.front() == '"' && probe.word() && probe.at_end()) {
                    set.value = *c.word();
                } else {
                    set.value = rest.substr(0, rest.find_last_not_of(" \t\r") + 1);
                }
                s.steps.push_back({where, set});
            } else if (k == "workload") {
                Workload w = parse_workload(c, where);
                if (s.workloads.count(w.name)) throw ScenarioError(where, "workload '" + w.name + "' is declared twice");
                s.workloads[w.name] = w;
            } else if (k == "request") {
                RequestStep r = need_request(c);
                if (c.peek_literal("body")) r.body_file = c.need("a file name after 'body'");
                c.need_end();
                read_headers_and_body(r);
                s.steps.push_back({where, r});
            } else if (k == "expect") {
                s.steps.push_back({where, parse_expect(c)});
            } else if (k == "capture") {
                CaptureStep cap;
                cap.name = c.need("a variable name");
                c.need_literal("=");
                std::string from = c.need_one_of({"json", "header"}, "where to capture from");
                cap.from = from == "json" ? CaptureStep::json : CaptureStep::header;
                cap.subject = c.need(from == "json" ? "a JSON pointer" : "a header name");
                c.need_end();
                s.steps.push_back({where, cap});
            } else if (k == "advance") {
                AdvanceStep a{c.need_duration("how far to advance the clock")};
                c.need_end();
                s.steps.push_back({where, a});
            } else if (k == "wait") {
                s.steps.push_back({where, parse_wait(c)});
            } else if (k == "fault") {
                s.steps.push_back({where, parse_fault(c)});
            } else {
                std::string list;
                for (const auto& kw : kKeywords) list += (list.empty() ? "" : ", ") + kw;
                throw ScenarioError(where, "expected a step (" + list + "), got '" + k + "'");
            }
        }
        for (const Step& step : s.steps) check_workloads_exist(s, step);
        return s;
    }

private:
    // After a request: `header Name: value` lines, then body lines up to a blank line or the
    // next step.
    void read_headers_and_body(RequestStep& r) {
        while (next_ < lines_.size()) {
            Cursor c(lines_[next_], {file_, static_cast<int>(next_ + 1)});
            auto first = c.word();
            if (!first || *first != "header") break;
            std::string rest(c.rest());
            size_t colon = rest.find(':');
            if (colon == std::string::npos || colon == 0) c.fail("a header as 'Name: value'");
            std::string value = rest.substr(colon + 1);
            value.erase(0, value.find_first_not_of(' '));
            r.headers.emplace_back(rest.substr(0, colon), value);
            ++next_;
        }
        std::string body;
        int first_line = static_cast<int>(next_ + 1);
        while (next_ < lines_.size()) {
            Cursor c(lines_[next_], {file_, static_cast<int>(next_ + 1)});
            auto first = c.word();
            if (!first || kKeywords.count(*first) || (*first)[0] == '#') break;
            body.append(lines_[next_]).append("\n");
            ++next_;
        }
        if (body.empty()) return;
        if (r.body_file) throw ScenarioError({file_, first_line}, "a request has a body file and an inline body");
        r.body = body;
    }

    Workload parse_workload(Cursor& c, const Where& where) {
        Workload w;
        w.where = where;
        w.name = c.need("a workload name");
        bool has_duration = false;
        while (auto key = c.word()) {
            if (*key == "duration") {
                w.duration = c.need_duration("the workload's duration");
                has_duration = true;
            } else if (*key == "exit") {
                w.exit_code = static_cast<int>(c.need_integer("an exit code"));
                if (w.exit_code > 255) c.fail("an exit code of 0 to 255");
            } else if (*key == "fail-first") {
                w.fail_first = static_cast<int>(c.need_integer("how many first attempts fail"));
            } else if (*key == "writes") {
                std::string path = c.need("a path to write");
                w.writes.emplace_back(path, c.need("the text to write (quoted)"));
            } else if (*key == "prints") {
                w.stdout_lines.push_back(c.need("a line to print (quoted)"));
            } else {
                throw ScenarioError(where, "expected duration, exit, fail-first, writes or prints, got '" + *key + "'");
            }
        }
        if (!has_duration) c.fail("'duration D'");
        return w;
    }

    ExpectStep parse_expect(Cursor& c) {
        ExpectStep e;
        std::string what = c.need_one_of({"status", "json", "header", "body", "file", "stdout", "states"},
                                         "what to expect");
        if (what == "status") {
            e.kind = ExpectStep::status;
            long long code = c.need_integer("an HTTP status");
            if (code < 100 || code > 599) c.fail("an HTTP status (100 to 599)");
            e.comparison = {"==", code};
        } else if (what == "json" || what == "header") {
            e.kind = what == "json" ? ExpectStep::json : ExpectStep::header;
            e.subject = c.need(what == "json" ? "a JSON pointer" : "a header name");
            if (what == "json" && !e.subject.empty() && e.subject[0] != '/' && e.subject.find("${") != 0) {
                c.fail("a JSON pointer such as /properties/executionState");
            }
            e.comparison = need_comparison(c);
        } else if (what == "body") {
            e.kind = ExpectStep::body;
            e.comparison = need_comparison(c);
        } else if (what == "file") {
            e.kind = ExpectStep::file;
            std::string where = c.need_one_of({"share", "container", "output"}, "where the file is");
            e.subject = where;
            if (where == "output") {
                e.subject.append(" ").append(c.need("a job name"));
                e.subject.append(" ").append(c.need("the output directory's ID/PATH"));
            } else {
                e.subject.append(" ").append(c.need("ACCOUNT/NAME/PATH"));
            }
            e.comparison = need_comparison(c);
        } else if (what == "stdout") {
            e.kind = ExpectStep::stdout_text;
            e.subject = c.need("a job name");
            size_t before = e.subject.size();
            while (!c.at_end()) {
                std::string_view rest = c.rest();
                std::string op(rest.substr(0, rest.find(' ')));
                if (kOperators.count(op)) break;
                e.subject += " " + c.need("a file name");
            }
            if (e.subject.size() > before && e.subject.find(' ', before + 1) != std::string::npos) {
                c.fail("at most one file name after the job");
            }
            e.comparison = need_comparison(c);
        } else {
            e.kind = ExpectStep::states;
            e.subject = c.need("a job name");
            while (auto state = c.word()) e.expected_states.push_back(*state);
            if (e.expected_states.empty()) c.fail("the job's states in order (queued running succeeded)");
        }
        c.need_end();
        return e;
    }

    WaitStep parse_wait(Cursor& c) {
        c.need_literal("until");
        WaitStep w;
        w.probe = need_request(c);
        c.need_literal("json");
        w.pointer = c.need("a JSON pointer");
        w.comparison = need_comparison(c);
        c.need_literal("within");
        w.within = c.need_duration("the longest wait");
        w.every = std::chrono::seconds(1);
        if (c.peek_literal("every")) w.every = c.need_duration("the time between tries");
        if (w.every.count() <= 0) c.fail("a positive time between tries");
        c.need_end();
        return w;
    }

    FaultStep parse_fault(Cursor& c) {
        FaultStep f;
        f.kind = c.need_one_of({"preempt", "fail", "kill", "storage", "enospc", "restart"}, "a fault");
        if (f.kind == "preempt" || f.kind == "fail") {
            std::string of = c.need_one_of({"node", "job"}, "'node ID' or 'job NAME'");
            f.args = {of, c.need(of == "node" ? "a node id" : "a job name")};
        } else if (f.kind == "kill") {
            c.need_literal("job");
            f.args = {"job", c.need("a job name")};
        } else if (f.kind == "storage") {
            std::string service = c.need_one_of({"blob", "file"}, "a storage service");
            std::string how = c.need_one_of({"fail", "stall", "recover"}, "fail, stall or recover");
            if (how == "recover") {
                f.args = {service, how};
                c.need_end();
                return f;
            }
            long long count = c.need_integer("how many operations");
            if (count < 1) c.fail("at least one operation");
            f.args = {service, how, std::to_string(count)};
            if (how == "fail") {
                long long status = 500;
                if (c.peek_literal("status")) status = c.need_integer("an HTTP status");
                if (status != 500 && status != 503) c.fail("status 500 or 503");
                f.args.push_back(std::to_string(status));
            } else {
                c.need_literal("for");
                f.args.push_back(std::to_string(c.need_duration("how long each stalls").count()));
            }
        } else if (f.kind == "enospc") {
            std::string kind = c.need_one_of({"share", "container"}, "share or container");
            f.args = {kind, c.need("ACCOUNT/NAME")};
            if (f.args[1].find('/') == std::string::npos) c.fail("ACCOUNT/NAME");
        }
        c.need_end();
        return f;
    }

    void check_workloads_exist(const Scenario& s, const Step& step) {
        const auto* r = std::get_if<RequestStep>(&step.body);
        if (!r || !r->body) return;
        // A job body naming `workload NAME` must name a declared one.
        const std::string marker = "workload ";
        for (size_t at = r->body->find(marker); at != std::string::npos; at = r->body->find(marker, at + 1)) {
            if (at > 0 && r->body->at(at - 1) != '"') continue;
            size_t end = r->body->find('"', at);
            std::string name = r->body->substr(at + marker.size(), end - at - marker.size());
            if (!s.workloads.count(name)) throw ScenarioError(step.where, "the job runs workload '" + name + "', which is not declared");
        }
    }

    std::string file_;
    std::vector<std::string_view> lines_;
    size_t next_ = 0;
};

}  // namespace

std::optional<Duration> parse_duration(std::string_view text) {
    if (text.empty()) return std::nullopt;
    long long total = 0;
    size_t i = 0;
    while (i < text.size()) {
        size_t start = i;
        while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
        if (i == start || i - start > 9) return std::nullopt;
        long long n = std::stoll(std::string(text.substr(start, i - start)));
        long long unit = 0;
        if (text.substr(i, 2) == "ms") {
            unit = 1;
            i += 2;
        } else if (i < text.size()) {
            switch (text[i]) {
                case 's': unit = 1000; break;
                case 'm': unit = 60'000; break;
                case 'h': unit = 3'600'000; break;
                case 'd': unit = 86'400'000; break;
                default: return std::nullopt;
            }
            ++i;
        } else {
            return std::nullopt;
        }
        total += n * unit;
        if (total > 366LL * 86'400'000) return std::nullopt;  // a year is plenty
    }
    return Duration(total);
}

std::string format_duration(Duration d) {
    long long ms = d.count();
    char out[48];
    std::snprintf(out, sizeof out, "%lldd%02lld:%02lld:%02lld.%03lld", ms / 86'400'000, ms / 3'600'000 % 24,
                  ms / 60'000 % 60, ms / 1000 % 60, ms % 1000);
    return out;
}

Scenario parse_scenario(std::string_view text, const std::string& file) { return Parser(text, file).parse(); }

std::optional<std::string> read_scenario_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

}  // namespace bai::scenarios
