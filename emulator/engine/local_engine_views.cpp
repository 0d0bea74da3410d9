// What other threads read of the job engine (the nodes' snapshot, remote login, cores in use, a job's
// node-local logs) and what they ask of it (pre-empt or fail a node, kill a job).
#include "emulator/engine/local_engine.h"

#include <algorithm>
#include <cstdio>

#include "common/log/logger.h"
#include "common/text/ascii.h"
#include "emulator/arm/job_execution.h"
#include "emulator/arm/preview_api.h"
#include "emulator/arm/resource_ids.h"
#include "emulator/arm/resource_store.h"
#include "emulator/arm/resource_view.h"
#include "emulator/engine/engine_time.h"
#include "emulator/validation/duration.h"

namespace bai::engine {

namespace fs = std::filesystem;
using nlohmann::json;

// ---- what other threads read ----

void LocalEngine::publish_logins() {
    if (!options_.logins) return;
    // Most batches of events change no node: the list is compared first, and sent only when it differs.
    std::vector<std::string> now;
    for (auto& [key, cluster] : clusters_) {
        if (cluster.deleted) continue;  // its nodes refuse logins while they finish its jobs
        for (auto& slot : cluster.nodes) now.push_back(slot->node.id + " " + slot->node.address);
    }
    if (now == login_nodes_) return;
    login_nodes_ = std::move(now);
    std::vector<LoginNode> nodes;
    for (auto& [key, cluster] : clusters_) {
        if (cluster.deleted) continue;
        for (auto& slot : cluster.nodes) {
            const Node& n = slot->node;
            nodes.push_back({n.id, n.address, n.root, n.gpus, cluster.spec.admin_user, cluster.spec.admin_password,
                             cluster.spec.admin_public_key, n.hosts});
        }
    }
    options_.logins->set_nodes(std::move(nodes));
}

void LocalEngine::publish() {
    publish_logins();  // first: a node listed by remote_login is already listening
    std::vector<NodeView> nodes;
    for (auto& [key, cluster] : clusters_) {
        for (auto& slot : cluster.nodes) {
            const Node& n = slot->node;
            NodeView view;
            view.cluster = cluster.spec.id;
            view.cluster_key = key;
            view.location = cluster.location;
            view.node_id = n.id;
            view.address = n.address;
            view.state = n.remove_after_job && n.state != NodeState::running ? "leaving" : state_name(n.state);
            if (!n.job_key.empty()) view.job = running_.count(n.job_key) ? running_.at(n.job_key).id : n.job_key;
            view.gpus = n.gpus;
            view.cores = cluster.spec.vm_size.cores;
            view.vm_size = cluster.spec.vm_size.name;
            view.low_priority = n.low_priority;
            view.root = n.root.string();
            if (n.hosts) view.placement = n.hosts->placement(n.id);
            nodes.push_back(std::move(view));
        }
    }
    std::lock_guard guard(snapshot_mutex_);
    nodes_snapshot_ = std::move(nodes);
}

json LocalEngine::nodes() {
    std::lock_guard guard(snapshot_mutex_);
    json out = json::array();
    for (const NodeView& n : nodes_snapshot_) {
        out.push_back({{"cluster", n.cluster},
                       {"clusterKey", n.cluster_key},
                       {"location", n.location},
                       {"nodeId", n.node_id},
                       {"ipAddress", n.address},
                       {"state", n.state},
                       {"job", n.job ? json(*n.job) : json()},
                       {"gpus", n.gpus},
                       {"cores", n.cores},
                       {"vmSize", n.vm_size},
                       {"lowPriority", n.low_priority},
                       {"root", n.root},
                       {"host", n.placement ? json{{"name", n.placement->host}, {"allocation", n.placement->allocation}}
                                            : json()}});
    }
    return out;
}

json LocalEngine::remote_login(const arm::StoredResource& resource) {
    std::lock_guard guard(snapshot_mutex_);
    std::vector<std::string> wanted;
    if (resource.type == arm::kind::kJob) {
        auto it = job_nodes_.find(resource.key);
        if (it != job_nodes_.end()) wanted = it->second;
    }
    json out = json::array();
    int port = 50000;  // the service's first NAT port, where no ssh server listens
    for (const NodeView& n : nodes_snapshot_) {
        bool match = resource.type == arm::kind::kJob ? std::find(wanted.begin(), wanted.end(), n.node_id) != wanted.end()
                                           : n.cluster_key == resource.key;
        if (!match) continue;
        std::optional<NodeLogins::Endpoint> login = options_.logins ? options_.logins->endpoint(n.node_id) : std::nullopt;
        if (login) {
            out.push_back({{"nodeId", n.node_id}, {"ipAddress", login->address}, {"port", login->port}});
        } else {
            out.push_back({{"nodeId", n.node_id}, {"ipAddress", n.address}, {"port", port}});
        }
        ++port;
    }
    return out;
}

json LocalEngine::cores_in_use(const std::string& location) {
    std::lock_guard guard(snapshot_mutex_);
    int dedicated = 0, low = 0;
    json by_size = json::object();
    std::string wanted = text::lower(location);
    for (const NodeView& n : nodes_snapshot_) {
        if (text::lower(n.location) != wanted) continue;
        const bool low_priority = n.low_priority;
        const int cores = n.cores;
        (low_priority ? low : dedicated) += cores;
        json& size = by_size[n.vm_size];
        if (!size.is_object()) size = json::object();
        const char* kind = low_priority ? "lowPriority" : "dedicated";
        size[kind] = size.value(kind, 0) + cores;
    }
    return {{"dedicated", dedicated}, {"lowPriority", low}, {"byVmSize", by_size}};
}

std::optional<json> LocalEngine::change_node(const std::string& node_id, NodeChange change) {
    // A refusal (std::invalid_argument) comes back as its message and is thrown anew here, not
    // through the promise: an exception handed between threads is freed by libstdc++'s own
    // reference count, which ThreadSanitizer cannot see.
    struct Answer {
        std::optional<json> changed;
        std::optional<std::string> refused;
    };
    std::optional<Answer> answer = events_.ask<Answer>([this, node_id, change]() -> Answer {
        size_t index = 0;
        ClusterState* cluster = cluster_of_node(node_id, index);
        if (!cluster) return {};
        try {
            json changed = change(*cluster, index);
            write_cluster(*cluster);
            return {std::move(changed), std::nullopt};
        } catch (const std::invalid_argument& e) {
            return {std::nullopt, std::string(e.what())};
        }
    });
    if (!answer) throw std::runtime_error("the job engine did not answer");
    if (answer->refused) throw std::invalid_argument(*answer->refused);
    return answer->changed;
}

std::optional<json> LocalEngine::preempt(const std::string& node_id) {
    return change_node(node_id, [this, node_id](ClusterState& cluster, size_t index) {
        Node& node = cluster.nodes[index]->node;
        if (!node.low_priority) {
            throw std::invalid_argument("node " + node_id + " is a dedicated node; only low-priority nodes are pre-empted");
        }
        trace("cluster " + cluster.spec.name, "node " + node_id + " is pre-empted");
        note(cluster.key, node_id, "", "", "preempted");
        json answer{{"nodeId", node_id}, {"requeuedJob", nullptr}};
        if (node.state == NodeState::running) {
            answer["requeuedJob"] = running_.count(node.job_key) ? running_.at(node.job_key).id : node.job_key;
            node.remove_after_job = true;
            stop_job(node.job_key, "preempted");
        } else {
            remove_node(cluster, index, "pre-empted");
        }
        return answer;
    });
}

std::optional<LocalEngine::LocalLogs> LocalEngine::stdouterr_directory(const std::string& job_key) {
    std::lock_guard guard(snapshot_mutex_);
    auto it = job_logs_.find(job_key);
    if (it == job_logs_.end()) return std::nullopt;
    return it->second;
}

void LocalEngine::kill(const std::string& job_id) {
    std::string key = arm::resource_key(job_id);
    post([this, key] { stop_job(key, "killed"); });
}

std::optional<json> LocalEngine::fail(const std::string& node_id) {
    return change_node(node_id, [this, node_id](ClusterState& cluster, size_t index) {
        Node& node = cluster.nodes[index]->node;
        trace("cluster " + cluster.spec.name, "node " + node_id + " fails");
        note(cluster.key, node_id, "", "", "fails");
        add_cluster_error(cluster, "NodeFailed", "The node " + node_id + " failed and is unusable");
        json answer{{"nodeId", node_id}, {"requeuedJob", nullptr}};
        node.failed = true;
        if (node.state == NodeState::running) {
            answer["requeuedJob"] = running_.count(node.job_key) ? running_.at(node.job_key).id : node.job_key;
            stop_job(node.job_key, "node failed");
        } else {
            if (cluster.nodes[index]->setup) cluster.nodes[index]->setup->cancel("node failed");
            node.state = NodeState::unusable;
        }
        return answer;
    });
}

}  // namespace bai::engine
