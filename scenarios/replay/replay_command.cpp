#include "scenarios/replay/replay_command.h"

#include <cstdio>
#include <fstream>

#include "emulator/engine/cpu_affinity.h"
#include "scenarios/replay/replay.h"
#include "scenarios/replay/replay_report.h"
#include "scenarios/replay/trace_log.h"

namespace bai::scenarios {
namespace {

constexpr const char* kUsage =
    "usage: batchai-emulator replay FILE... [--seed N] [--trace OUT] [--report OUT.html] [--data-dir DIR]\n"
    "                               [--real-timeout S]\n"
    "\n"
    "  --seed N          the seed (default: the file's `seed`, else 1)\n"
    "  --trace OUT       write each file's trace to OUT (one line per event; '-': standard output)\n"
    "  --report OUT      write one self-contained HTML file: each scenario's verdict, steps, and its\n"
    "                    trace drawn over virtual time (jobs, nodes, faults)\n"
    "  --data-dir DIR    the emulator's data directory, kept afterwards (default: a temporary one\n"
    "                    in $TMPDIR, else in /dev/shm)\n"
    "  --real-timeout S  how long the virtual clock waits for a real process (default 300)\n";

struct CommandLine {
    std::vector<std::string> files;
    ReplayOptions options;
    std::string trace_out;
    std::string report_out;
};

CommandLine parse(const std::vector<std::string>& args) {
    CommandLine c;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        auto value = [&]() -> const std::string& {
            if (i + 1 >= args.size()) throw std::invalid_argument(a + " needs a value");
            return args[++i];
        };
        auto number = [&](const std::string& text) {
            size_t used = 0;
            unsigned long long n = 0;
            try {
                n = std::stoull(text, &used);
            } catch (const std::exception&) {
                used = 0;
            }
            if (used != text.size() || text.empty() || text[0] == '-') throw std::invalid_argument(a + " needs a number, got '" + text + "'");
            return n;
        };
        if (a == "--seed") {
            c.options.seed = number(value());
        } else if (a == "--trace") {
            c.trace_out = value();
        } else if (a == "--report") {
            c.report_out = value();
        } else if (a == "--data-dir") {
            c.options.data_dir = value();
        } else if (a == "--real-timeout") {
            c.options.real_limit = std::chrono::seconds(number(value()));
        } else if (a == "--help" || a == "-h") {
            throw std::invalid_argument("");
        } else if (a.rfind("--", 0) == 0) {
            throw std::invalid_argument("unknown argument '" + a + "'");
        } else {
            c.files.push_back(a);
        }
    }
    if (c.files.empty()) throw std::invalid_argument("no scenario file given");
    if (!c.options.data_dir.empty() && c.files.size() > 1) {
        throw std::invalid_argument("--data-dir takes one scenario file (each replay starts from an empty directory)");
    }
    return c;
}

}  // namespace

int replay_command(const std::vector<std::string>& args) {
    CommandLine c;
    try {
        c = parse(args);
    } catch (const std::invalid_argument& e) {
        if (*e.what()) std::fprintf(stderr, "batchai-emulator replay: %s\n", e.what());
        std::fputs(kUsage, *e.what() ? stderr : stdout);
        return *e.what() ? 2 : 0;
    }
    std::vector<Scenario> scenarios;
    for (const std::string& file : c.files) {
        std::optional<std::string> text = read_scenario_text(file);
        if (!text) {
            std::fprintf(stderr, "%s: cannot read the file\n", file.c_str());
            return 2;
        }
        try {
            scenarios.push_back(parse_scenario(*text, file));
        } catch (const ScenarioError& e) {
            std::fprintf(stderr, "%s\n", e.what());
            return 2;
        }
    }
    std::ofstream trace_file;
    if (!c.trace_out.empty() && c.trace_out != "-") {
        trace_file.open(c.trace_out, std::ios::binary | std::ios::trunc);
        if (!trace_file) {
            std::fprintf(stderr, "batchai-emulator replay: cannot write %s\n", c.trace_out.c_str());
            return 2;
        }
    }
    std::ofstream report_file;
    if (!c.report_out.empty()) {
        report_file.open(c.report_out, std::ios::binary | std::ios::trunc);
        if (!report_file) {
            std::fprintf(stderr, "batchai-emulator replay: cannot write %s\n", c.report_out.c_str());
            return 2;
        }
    }
    // The emulator's threads take turns on the virtual clock: one CPU serves them best
    // (cpu_affinity.h); what its jobs start still gets them all.
    engine::run_threads_on_one_cpu();
    std::vector<ReplayResult> results;
    results.reserve(scenarios.size());
    int failed = 0;
    for (const Scenario& scenario : scenarios) {
        auto started = std::chrono::steady_clock::now();
        const ReplayResult& r = results.emplace_back(replay(scenario, c.options));
        double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        for (const std::string& line : r.trace) {
            if (trace_file.is_open()) trace_file << line << "\n";
            if (c.trace_out == "-") std::printf("%s\n", line.c_str());
        }
        double virtual_seconds = std::chrono::duration<double>(r.virtual_time).count();
        if (r.passed) {
            std::printf("PASS %s: %zu events, %s of virtual time in %.3f s (x%.0f)\n", scenario.file.c_str(), r.trace.size(),
                        TraceLog::format_offset(r.virtual_time).c_str(), seconds,
                        seconds > 0 ? virtual_seconds / seconds : 0.0);
            continue;
        }
        ++failed;
        std::printf("FAIL %s\n", r.failure.c_str());
        std::printf("  the trace's last lines:\n");
        size_t from = r.trace.size() > 25 ? r.trace.size() - 25 : 0;
        for (size_t i = from; i < r.trace.size(); ++i) std::printf("    %s\n", r.trace[i].c_str());
        std::printf("  replay it with: batchai-emulator replay %s --seed %llu --trace -\n", scenario.file.c_str(),
                    static_cast<unsigned long long>(r.seed));
    }
    if (report_file.is_open()) {
        std::vector<ReportedReplay> reported;
        for (size_t i = 0; i < scenarios.size(); ++i) reported.push_back({scenarios[i], results[i]});
        report_file << replay_report_html(reported);
        report_file.close();
        if (!report_file) {
            std::fprintf(stderr, "batchai-emulator replay: cannot write %s\n", c.report_out.c_str());
            return 2;
        }
        std::printf("report: %s\n", c.report_out.c_str());
    }
    std::fflush(stdout);
    return failed == 0 ? 0 : 1;
}

}  // namespace bai::scenarios
