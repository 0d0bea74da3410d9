// Scenario files: a line-oriented script of a whole workflow and its faults, parsed
// into steps with the file and line each came from. Variables (${name}) are kept as written:
// they are substituted when the step runs, since captures happen at replay time. The format is
// in scenarios/README.md.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace bai::scenarios {

using Duration = std::chrono::milliseconds;

struct Where {
    std::string file;
    int line = 0;
    std::string text() const { return file + ":" + std::to_string(line); }
};

// A bad scenario file: "FILE:LINE: expected ..., got ...".
struct ScenarioError : std::runtime_error {
    ScenarioError(const Where& where, const std::string& message)
        : std::runtime_error(where.text() + ": " + message), where(where) {}
    Where where;
};

// ==, !=, <, <=, >, >= against a JSON value; contains (a substring, an array item or an object
// key); exists and absent (no value).
struct Comparison {
    std::string op;
    nlohmann::json value;
};

struct RequestStep {
    std::string method;    // GET PUT POST PATCH DELETE HEAD
    std::string endpoint;  // arm, blob, file
    std::string target;    // path and query, as written (variables unsubstituted)
    std::vector<std::pair<std::string, std::string>> headers;
    std::optional<std::string> body;       // inline lines
    std::optional<std::string> body_file;  // `body FILE`, relative to the scenario
};

struct ExpectStep {
    // status, json (a JSON pointer into the last response), header, body: the last response.
    // file: "share ACCOUNT/SHARE/PATH", "container ACCOUNT/CONTAINER/BLOB" or "output JOB ID/PATH".
    // stdout: a job's stdout ("JOB" or "JOB FILE"). states: a job's execution states in order.
    enum Kind { status, json, header, body, file, stdout_text, states } kind;
    std::string subject;
    Comparison comparison;
    std::vector<std::string> expected_states;
};

struct CaptureStep {
    std::string name;
    enum From { json, header } from;
    std::string subject;  // a JSON pointer or a header name
};

struct AdvanceStep {
    Duration by;
};

// `wait until REQUEST json POINTER OP VALUE within D [every D]`: repeats the request, the clock
// moving by `every` between tries, until the comparison holds or `within` has passed.
struct WaitStep {
    RequestStep probe;
    std::string pointer;
    Comparison comparison;
    Duration within;
    Duration every;
};

struct FaultStep {
    // preempt, fail (a node: "node ID" or "job NAME", the node running it); kill ("job NAME");
    // storage ("blob|file fail K [status S]" or "blob|file stall K for D"); enospc ("share A/S"
    // or "container A/C"); restart.
    std::string kind;
    std::vector<std::string> args;
};

struct SetStep {
    std::string name;
    std::string value;
};

using StepBody = std::variant<RequestStep, ExpectStep, CaptureStep, AdvanceStep, WaitStep, FaultStep, SetStep>;

struct Step {
    Where where;
    StepBody body;
};

// A job whose command line is `workload NAME`: it runs for `duration` of virtual time, writes
// its files (paths may use the job's variables), prints its stdout lines, and exits with
// `exit_code`, except its first `fail_first` attempts, which exit with 1.
struct Workload {
    Where where;
    std::string name;
    Duration duration{0};
    int exit_code = 0;
    int fail_first = 0;
    std::vector<std::pair<std::string, std::string>> writes;
    std::vector<std::string> stdout_lines;
};

struct Scenario {
    std::string file;
    std::string name;
    std::optional<std::uint64_t> seed;
    std::vector<std::string> emulator_args;
    std::map<std::string, Workload> workloads;
    std::vector<Step> steps;
};

// Throws ScenarioError naming the file, the line and what was expected.
Scenario parse_scenario(std::string_view text, const std::string& file);

// A scenario file's or a body file's text; nullopt when it cannot be read.
std::optional<std::string> read_scenario_text(const std::string& path);

// "90s", "5m", "1h30m", "7d", "250ms".
std::optional<Duration> parse_duration(std::string_view text);
std::string format_duration(Duration d);

}  // namespace bai::scenarios
