#include "emulator/engine/scheduling.h"

#include <algorithm>

#include "common/text/ascii.h"

namespace bai::engine {

int priority_rank(const nlohmann::json& p) {
    if (p.is_number_integer()) return std::clamp(p.get<int>(), -1000, 1000);
    if (!p.is_string()) return 0;
    std::string name = text::lower(p.get<std::string>());
    if (name == "low") return -500;
    if (name == "high") return 500;
    return 0;
}

bool runs_before(const QueuedJob& a, const QueuedJob& b) {
    if (a.priority != b.priority) return a.priority > b.priority;
    return a.seq < b.seq;
}

std::vector<size_t> jobs_to_start(const std::vector<QueuedJob>& queue, int idle_nodes, int cluster_limit) {
    std::vector<size_t> start;
    for (size_t i = 0; i < queue.size(); ++i) {
        if (queue[i].node_count > cluster_limit) continue;
        if (queue[i].node_count > idle_nodes) break;
        idle_nodes -= queue[i].node_count;
        start.push_back(i);
    }
    return start;
}

int autoscale_target(const AutoScale& bounds, int demand, int current, bool idle_long_enough) {
    int wanted = std::clamp(demand, bounds.minimum, bounds.ceiling());
    if (demand == 0) return idle_long_enough ? bounds.minimum : std::max(current, bounds.minimum);
    return std::max(wanted, std::min(current, bounds.ceiling()));
}

std::vector<size_t> nodes_to_remove(const std::vector<NodeState>& nodes, int count) {
    std::vector<size_t> out;
    for (NodeState state : {NodeState::unusable, NodeState::preparing, NodeState::idle, NodeState::running}) {
        for (size_t i = nodes.size(); i-- > 0 && static_cast<int>(out.size()) < count;) {
            if (nodes[i] == state) out.push_back(i);
        }
    }
    return out;
}

}  // namespace bai::engine
