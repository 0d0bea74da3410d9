// `replay --report OUT`: one self-contained HTML file (no script, no external asset; inline style
// and SVG) for a CI job to keep: per scenario, the verdict and the failure, the replay's steps
// with their results, and the trace drawn over virtual time: each job's states, each node's life
// with the jobs it ran, faults marked. Built from the trace's lines alone (trace_log.h).
#pragma once

#include <string>
#include <vector>

#include "scenarios/replay/replay.h"

namespace bai::scenarios {

struct ReportedReplay {
    const Scenario& scenario;
    const ReplayResult& result;
};

std::string replay_report_html(const std::vector<ReportedReplay>& replays);

}  // namespace bai::scenarios
