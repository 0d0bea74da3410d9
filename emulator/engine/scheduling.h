// The engine's decisions, apart from its threads so that they can be tested alone: the order of
// a cluster's queue, how many nodes auto-scale wants, which nodes go when a cluster shrinks.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "emulator/engine/cluster_spec.h"
#include "emulator/engine/node.h"

namespace bai::engine {

struct QueuedJob {
    std::string key;  // lower-cased ARM id
    std::string id;
    int priority = 0;     // priority_rank()
    std::int64_t seq = 0;  // creation order
    int node_count = 1;
};

// "low" < "normal" < "high" (2018-05-01), or the 2017-09-01-preview integer (-1000..1000).
int priority_rank(const nlohmann::json& scheduling_priority);

// Higher priority first, then the order of creation.
bool runs_before(const QueuedJob& a, const QueuedJob& b);

// The jobs to start now, in order, given the idle node count and the most nodes the cluster can
// have: gang scheduling in queue order; a job that waits for nodes holds back the jobs after
// it, except one that needs more nodes than the cluster can ever have, which waits without
// holding the others back.
std::vector<size_t> jobs_to_start(const std::vector<QueuedJob>& ordered_queue, int idle_nodes, int cluster_limit);

// The node count auto-scale wants: the nodes that the queued and running jobs need, within
// [minimum, maximum]; while there is demand it never shrinks below `current`, and it falls to
// the minimum only once the cluster has been idle long enough.
int autoscale_target(const AutoScale& bounds, int demand, int current, bool idle_long_enough);

// Which of `nodes` leave when the cluster shrinks by `count`: unusable first, then preparing,
// then idle, then running (newest first within each).
std::vector<size_t> nodes_to_remove(const std::vector<NodeState>& nodes, int count);

}  // namespace bai::engine
