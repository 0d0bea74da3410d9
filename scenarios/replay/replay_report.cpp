#include "scenarios/replay/replay_report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>

#include "common/text/markup_escape.h"
#include "scenarios/replay/trace_log.h"

namespace bai::scenarios {
namespace {

// At most this many rows of jobs and of nodes are drawn (a 1000-job week stays readable and small).
constexpr size_t kMaxRows = 400;
constexpr double kLabelWidth = 230;
constexpr double kPlotWidth = 900;
constexpr double kRowHeight = 16;

// "1d02:03:04.005" -> seconds; nullopt when the text is not such an offset.
std::optional<double> offset_seconds(const std::string& text) {
    int d = 0, h = 0, m = 0, s = 0, ms = 0;
    char tail = 0;
    if (std::sscanf(text.c_str(), "%dd%d:%d:%d.%d%c", &d, &h, &m, &s, &ms, &tail) != 5) return std::nullopt;
    return d * 86400.0 + h * 3600.0 + m * 60.0 + s + ms / 1000.0;
}

struct Line {
    double t = 0;
    std::string time;   // as written
    std::string actor;  // "replay", "job NAME", "cluster NAME"
    std::string name;   // NAME for jobs and clusters
    std::string event;
};

std::optional<Line> parse_line(const std::string& text) {
    std::istringstream in(text);
    Line l;
    std::string kind;
    if (!(in >> l.time >> kind)) return std::nullopt;
    std::optional<double> t = offset_seconds(l.time);
    if (!t) return std::nullopt;
    l.t = *t;
    if (kind == "replay") {
        l.actor = kind;
    } else if (kind == "job" || kind == "cluster") {
        if (!(in >> l.name)) return std::nullopt;
        l.actor = kind + " " + l.name;
    } else {
        return std::nullopt;
    }
    std::getline(in >> std::ws, l.event);
    return l;
}

struct Segment {
    double from = 0, to = -1;  // to < 0: until the end
    std::string label;         // a job's state, the job a node ran
};

struct Row {
    std::string name;
    std::vector<Segment> segments;
    std::vector<std::pair<double, std::string>> marks;  // pre-empted, unusable
};

void close_last(Row& row, double t) {
    if (!row.segments.empty() && row.segments.back().to < 0) row.segments.back().to = t;
}

Row& row_for(std::vector<Row>& rows, std::map<std::string, size_t>& index, const std::string& name) {
    auto [it, added] = index.emplace(name, rows.size());
    if (added) rows.push_back({name, {}, {}});
    return rows[it->second];
}

struct Timeline {
    std::vector<Row> jobs;
    std::vector<Row> nodes;
    std::vector<std::pair<double, std::string>> faults;
    double end = 0;
};

Timeline timeline_of(const std::vector<std::string>& trace, double end) {
    Timeline tl;
    tl.end = end;
    std::map<std::string, size_t> jobs, nodes;
    std::map<std::string, std::string> running_on;  // node -> job
    for (const std::string& text : trace) {
        std::optional<Line> line = parse_line(text);
        if (!line) continue;
        tl.end = std::max(tl.end, line->t);
        const std::string& e = line->event;
        if (line->actor == "replay") {
            if (e.rfind("fault ", 0) == 0) tl.faults.emplace_back(line->t, e.substr(6));
            continue;
        }
        if (line->actor.rfind("job ", 0) == 0) {
            Row& row = row_for(tl.jobs, jobs, line->name);
            if (e == "is queued") {
                close_last(row, line->t);
                row.segments.push_back({line->t, -1, "queued"});
            } else if (size_t arrow = e.find(" -> "); arrow != std::string::npos) {
                close_last(row, line->t);
                const std::string to = e.substr(arrow + 4);
                row.segments.push_back({line->t, -1, to});
                if (to != "running") {  // the nodes it ran on are free of it
                    for (auto& [node, job] : running_on) {
                        if (job != line->name) continue;
                        close_last(row_for(tl.nodes, nodes, node), line->t);
                        job.clear();
                    }
                }
            } else if (e.rfind("runs on ", 0) == 0) {
                std::istringstream names(e.substr(8));
                for (std::string node; std::getline(names >> std::ws, node, ',');) {
                    Row& n = row_for(tl.nodes, nodes, node);
                    close_last(n, line->t);
                    n.segments.push_back({line->t, -1, line->name});
                    running_on[node] = line->name;
                }
            }
            continue;
        }
        // cluster NAME node N joins / is idle / is pre-empted / is unusable / leaves ...
        if (e.rfind("node ", 0) != 0) continue;
        std::istringstream words(e.substr(5));
        std::string node, rest;
        words >> node;
        std::getline(words >> std::ws, rest);
        Row& row = row_for(tl.nodes, nodes, node);
        if (rest == "joins") {
            row.marks.emplace_back(line->t, "joins (cluster " + line->name + ")");
        } else if (rest == "is pre-empted" || rest == "is unusable") {
            row.marks.emplace_back(line->t, rest.substr(3));
        } else if (rest.rfind("leaves", 0) == 0) {
            close_last(row, line->t);
            row.marks.emplace_back(line->t, rest);
        }
    }
    return tl;
}

std::string number(double v) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.1f", v);
    return buffer;
}

std::string fill_of(const std::string& label) {
    if (label == "queued") return "#fde68a";
    if (label == "running") return "#93c5fd";
    if (label == "succeeded") return "#86efac";
    if (label == "failed") return "#fca5a5";
    if (label == "terminating") return "#fdba74";
    return "#c4b5fd";  // a node running a job
}

std::string offset_text(double seconds) {
    return TraceLog::format_offset(std::chrono::nanoseconds(static_cast<std::int64_t>(seconds * 1e9)));
}

// One chart: a row per entry, segments as bars, marks as ticks, faults as red lines across.
std::string chart(const std::string& id, const std::vector<Row>& rows, const Timeline& tl, bool label_segments) {
    const size_t shown = std::min(rows.size(), kMaxRows);
    const double span = tl.end > 0 ? tl.end : 1;
    auto x = [&](double t) { return kLabelWidth + t / span * kPlotWidth; };
    const double height = kRowHeight * static_cast<double>(shown) + 24;
    std::ostringstream out;
    out << "<svg id=\"" << id << "\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" << number(kLabelWidth + kPlotWidth + 10)
        << "\" height=\"" << number(height) << "\" font-size=\"11\" font-family=\"monospace\">";
    for (int tick = 0; tick <= 4; ++tick) {
        const double t = span * tick / 4;
        out << "<line x1=\"" << number(x(t)) << "\" y1=\"0\" x2=\"" << number(x(t)) << "\" y2=\"" << number(height - 14)
            << "\" stroke=\"#e5e7eb\"/><text x=\"" << number(std::min(x(t), kLabelWidth + kPlotWidth - 80)) << "\" y=\""
            << number(height - 2) << "\" fill=\"#6b7280\">" << text::markup_escape(offset_text(t)) << "</text>";
    }
    for (size_t i = 0; i < shown; ++i) {
        const Row& row = rows[i];
        const double y = kRowHeight * static_cast<double>(i);
        out << "<g class=\"row\" data-name=\"" << text::markup_escape(row.name) << "\"><text x=\"0\" y=\"" << number(y + 11) << "\">"
            << text::markup_escape(row.name.size() > 32 ? row.name.substr(0, 31) + "\u2026" : row.name) << "</text>";
        for (const Segment& s : row.segments) {
            const double to = s.to < 0 ? span : s.to;
            // A state entered at the end (a job's last) still shows: 3 px at least.
            const double width = std::max(3.0, x(to) - x(s.from));
            out << "<rect x=\"" << number(x(s.from)) << "\" y=\"" << number(y + 2) << "\" width=\"" << number(width)
                << "\" height=\"" << number(kRowHeight - 4) << "\" fill=\"" << fill_of(label_segments ? s.label : "")
                << "\" data-label=\"" << text::markup_escape(s.label) << "\"><title>"
                << text::markup_escape(s.label + ": " + offset_text(s.from) + " - " + offset_text(to)) << "</title></rect>";
            // A node's bar names its job where there is room.
            if (!label_segments && width > 8.0 * static_cast<double>(s.label.size())) {
                out << "<text x=\"" << number(x(s.from) + 3) << "\" y=\"" << number(y + 11) << "\">" << text::markup_escape(s.label)
                    << "</text>";
            }
        }
        for (const auto& [t, what] : row.marks) {
            out << "<rect x=\"" << number(x(t) - 1) << "\" y=\"" << number(y) << "\" width=\"2\" height=\""
                << number(kRowHeight) << "\" fill=\"#374151\"><title>" << text::markup_escape(offset_text(t) + " " + what)
                << "</title></rect>";
        }
        out << "</g>";
    }
    for (const auto& [t, what] : tl.faults) {
        out << "<line class=\"fault\" x1=\"" << number(x(t)) << "\" y1=\"0\" x2=\"" << number(x(t)) << "\" y2=\""
            << number(height - 14) << "\" stroke=\"#dc2626\" stroke-dasharray=\"3,2\"><title>"
            << text::markup_escape(offset_text(t) + " fault " + what) << "</title></line>";
    }
    out << "</svg>";
    if (rows.size() > shown) {
        out << "<p>" << rows.size() - shown << " more rows not drawn (the first " << shown << " are).</p>";
    }
    return out.str();
}

std::string steps_table(const std::vector<std::string>& trace) {
    std::ostringstream out;
    out << "<table class=\"steps\"><tr><th>virtual time</th><th>step</th><th>result</th></tr>";
    bool open = false;
    for (const std::string& text : trace) {
        std::optional<Line> line = parse_line(text);
        if (!line || line->actor != "replay") continue;
        const std::string& e = line->event;
        if (e.rfind("answered ", 0) == 0 && open) {  // the answer to the request above
            out << "<td>" << text::markup_escape(e) << "</td></tr>";
            open = false;
            continue;
        }
        if (open) out << "<td></td></tr>";
        open = false;
        const bool request = e.rfind("GET ", 0) == 0 || e.rfind("PUT ", 0) == 0 || e.rfind("POST ", 0) == 0 ||
                             e.rfind("DELETE ", 0) == 0 || e.rfind("PATCH ", 0) == 0 || e.rfind("HEAD ", 0) == 0;
        const bool fault = e.rfind("fault ", 0) == 0;
        out << "<tr" << (fault ? " class=\"fault\"" : "") << "><td>" << text::markup_escape(line->time) << "</td><td>"
            << text::markup_escape(e) << "</td>";
        if (request) {
            open = true;
        } else {
            out << "<td></td></tr>";
        }
    }
    if (open) out << "<td></td></tr>";
    out << "</table>";
    return out.str();
}

constexpr const char* kStyle = R"css(
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #111827; }
h1 { font-size: 20px; } h2 { font-size: 17px; margin-top: 2em; } h3 { font-size: 14px; }
.verdict { display: inline-block; padding: 0 0.6em; border-radius: 3px; font-weight: 600; }
.pass { background: #dcfce7; } .fail { background: #fee2e2; }
.failure { border-left: 4px solid #dc2626; background: #fef2f2; padding: 0.6em 0.9em; font-family: monospace; white-space: pre-wrap; }
table.steps { border-collapse: collapse; font-family: monospace; font-size: 12px; }
table.steps td, table.steps th { border-bottom: 1px solid #e5e7eb; padding: 0.15em 0.8em 0.15em 0; text-align: left; vertical-align: top; }
tr.fault td { color: #b91c1c; }
.legend span { display: inline-block; padding: 0 0.5em; margin-right: 0.4em; font-size: 12px; }
details { margin: 0.6em 0; }
)css";

}  // namespace

std::string replay_report_html(const std::vector<ReportedReplay>& replays) {
    std::ostringstream out;
    size_t failed = 0;
    for (const ReportedReplay& r : replays) failed += r.result.passed ? 0 : 1;
    out << "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Scenario replay: "
        << (failed ? std::to_string(failed) + " failed" : std::string("all passed")) << "</title><style>" << kStyle
        << "</style></head><body><h1>Scenario replay: " << replays.size() << " scenario(s), "
        << (failed ? std::to_string(failed) + " failed" : std::string("all passed")) << "</h1>";
    for (size_t i = 0; i < replays.size(); ++i) {
        const Scenario& s = replays[i].scenario;
        const ReplayResult& r = replays[i].result;
        const double end = std::chrono::duration<double>(r.virtual_time).count();
        out << "<section class=\"scenario\" id=\"scenario-" << i << "\"><h2><span class=\"verdict "
            << (r.passed ? "pass\">PASS" : "fail\">FAIL") << "</span> " << text::markup_escape(s.file) << "</h2><p>"
            << text::markup_escape(s.name) << " &middot; seed " << r.seed << " &middot; " << r.trace.size() << " events &middot; "
            << text::markup_escape(offset_text(end)) << " of virtual time</p>";
        if (!r.passed) out << "<div class=\"failure\" id=\"failure-" << i << "\">" << text::markup_escape(r.failure) << "</div>";
        const Timeline tl = timeline_of(r.trace, end);
        out << "<h3>Jobs</h3><p class=\"legend\">";
        for (const char* state : {"queued", "running", "succeeded", "failed", "terminating"}) {
            out << "<span style=\"background:" << fill_of(state) << "\">" << state << "</span>";
        }
        out << "<span style=\"color:#dc2626\">- - - fault</span></p>";
        out << (tl.jobs.empty() ? "<p>No jobs.</p>" : chart("jobs-" + std::to_string(i), tl.jobs, tl, true));
        out << "<h3>Nodes (the jobs they ran)</h3>";
        out << (tl.nodes.empty() ? "<p>No nodes.</p>" : chart("nodes-" + std::to_string(i), tl.nodes, tl, false));
        out << "<details" << (r.passed ? "" : " open") << "><summary>Steps</summary>" << steps_table(r.trace) << "</details>";
        out << "<details><summary>The trace (" << r.trace.size() << " lines)</summary><pre>";
        for (const std::string& line : r.trace) out << text::markup_escape(line) << "\n";
        out << "</pre></details></section>";
    }
    out << "</body></html>\n";
    return out.str();
}

}  // namespace bai::scenarios
