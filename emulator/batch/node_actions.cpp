// What is done to one compute node of a Batch pool: pre-emption (a low-priority node), reboot and
// reimage, removal from the pool, scheduling disabled and enabled. Each runs on the nodes' thread.
#include "common/log/logger.h"
#include "common/text/ascii.h"
#include "common/time/timestamps.h"
#include "emulator/batch/batch_error.h"
#include "emulator/batch/pool_nodes.h"
#include "emulator/engine/writable_root.h"

namespace bai::batch {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// How long a reboot or a reimage takes once the node has no task: long enough to be seen.
constexpr std::chrono::seconds kRebootTime{1};

// What a node's running tasks become under a deallocation, reboot or scheduling option.
std::string task_reason_for(const std::string& option) { return option == "terminate" ? "terminate" : "requeue"; }
bool stops_tasks(const std::string& option) { return option == "requeue" || option == "terminate"; }

}  // namespace

PoolNodes::Node* PoolNodes::find_node(const Key& key, const std::string& node_id) {
    auto it = state_.find(key);
    if (it == state_.end()) return nullptr;
    for (auto& node : it->second.nodes) {
        if (node->id == node_id) return node.get();
    }
    return nullptr;
}

int PoolNodes::stop_node_tasks(const Node& node, const std::string& reason) {
    int stopped = 0;
    for (auto& [key, run] : running_) {
        if (!run.on(node.id) || run.control->cancelled()) continue;
        run.control->cancel(reason);
        ++stopped;
    }
    return stopped;
}

void PoolNodes::cancel_node(const Node& node, const std::string& reason) {
    node.control->cancel(reason);
    for (auto& [serial, side] : side_runs_) {
        if (side.node_id == node.id) side.control->cancel(reason);
    }
}

// The node has no running task left: it leaves, or reboots, if it was waiting to.
void PoolNodes::node_drained(const Key& key, Node& node) {
    const Node::Then then = node.then;
    if (then == Node::Then::nothing) return;
    node.then = Node::Then::nothing;
    if (then == Node::Then::leave) return remove_node(state_[key], node);
    node.state = then == Node::Then::reimage ? "reimaging" : "rebooting";
    node.state_time = time::format_iso8601(time::now());
    cancel_node(node, "the node reboots");
    log::info("batch node " + node.id + " is " + node.state);
    trace("batch pool " + state_[key].id, "node " + node.id + " is " + node.state);
    // A start task still running reports to start_task_done, which goes on with finish_reboot.
    if (node.start_task.joinable()) return;
    at(clock_.now() + kRebootTime, [this, key, id = node.id] { finish_reboot(key, id); });
}

void PoolNodes::finish_reboot(const Key& key, const std::string& node_id) {
    Node* node = find_node(key, node_id);
    if (!node || (node->state != "rebooting" && node->state != "reimaging")) return;
    std::optional<StoredEntity> stored = store_.get(key.first, kPools, key.second);
    if (!stored) return;
    if (node->state == "reimaging") {  // a fresh disk: nothing of what ran stays
        std::error_code ec;
        engine::remove_tree(node->root, ec);
        make_node_directories(node->root);
        node->users.clear();
        node->job_tasks.clear();
    } else {
        // A job's preparation runs again before its next task here, unless it succeeded and the
        // job says rerunOnNodeRebootAfterSuccess false (one cut by the reboot did not complete:
        // job_task_done left it to run again).
        for (auto& [job_key, tasks] : node->job_tasks) {
            if (tasks.state != "succeeded") continue;
            std::optional<StoredEntity> job = store_.get(key.first, kJobs, job_key);
            if (job && !job->body.value("jobPreparationTask", json::object()).value("rerunOnNodeRebootAfterSuccess", true)) continue;
            tasks.state.clear();
        }
    }
    node->control = std::make_shared<engine::RunControl>();
    node->start_task_info = nullptr;
    node->errors = nullptr;
    launch_start_task(state_[key], *node, stored->body);
    reconcile(key);
}

std::optional<json> PoolNodes::preempt(const std::string& account, const std::string& pool_id, const std::string& node_id,
                                       std::chrono::seconds recover_after) {
    Key key{account, text::lower(pool_id)};
    return ask<std::optional<json>>([this, key, node_id, recover_after]() -> std::optional<json> {
        Node* node = find_node(key, node_id);
        if (!node) return std::nullopt;
        if (node->dedicated) {
            throw BatchError(409, "NodeNotLowPriority", "Only low-priority nodes are pre-empted; " + node_id + " is dedicated.");
        }
        if (node->state == "preempted") throw BatchError(409, "NodeAlreadyPreempted", "The node " + node_id + " is pre-empted already.");
        json requeued = json::array();
        for (auto& [run_key, run] : running_) {
            if (run.on(node_id)) requeued.push_back(run.task.job_id + "/" + run.task.task_id);
        }
        const json answer{{"nodeId", node_id}, {"requeuedTasks", requeued}};
        if (node->then == Node::Then::leave) {
            // Leaving the pool already: it goes now, its tasks requeued; nothing takes its place.
            remove_node(state_[key], *node, "requeue");
            reconcile(key);
            return answer;
        }
        log::info("batch pool " + state_[key].id + ": node " + node_id + " is pre-empted");
        trace("batch pool " + state_[key].id, "node " + node_id + " is pre-empted");
        stop_node_tasks(*node, "requeue");
        cancel_node(*node, "the node is pre-empted");
        node->state = "preempted";
        node->state_time = time::format_iso8601(time::now());
        node->then = Node::Then::nothing;
        // It stays, counted and idle, until capacity comes back: then a new node takes its place.
        at(clock_.now() + recover_after, [this, key, node_id] {
            auto it = state_.find(key);
            if (it == state_.end()) return;
            for (size_t i = 0; i < it->second.nodes.size(); ++i) {
                if (it->second.nodes[i]->id != node_id || it->second.nodes[i]->state != "preempted") continue;
                remove_node(it->second, i);
                reconcile(key);
                return;
            }
        });
        reconcile(key);
        return answer;
    });
}

bool PoolNodes::reboot(const std::string& account, const std::string& pool_id, const std::string& node_id,
                       const std::string& option, bool reimage) {
    Key key{account, text::lower(pool_id)};
    return ask<bool>([this, key, node_id, option, reimage] {
        Node* node = find_node(key, node_id);
        if (!node) return false;
        if (node->state == "preempted" || node->then == Node::Then::leave || node->state == "rebooting" ||
            node->state == "reimaging") {
            throw BatchError(409, "NodeNotReady", "The node " + node_id + " is " + node->state + ": it cannot be rebooted now.");
        }
        node->then = reimage ? Node::Then::reimage : Node::Then::reboot;
        if (stops_tasks(option)) stop_node_tasks(*node, task_reason_for(option));
        if (node->running_tasks == 0) node_drained(key, *node);
        publish(key);
        return true;
    });
}

void PoolNodes::remove_nodes(const std::string& account, const std::string& pool_id, const std::vector<std::string>& node_ids,
                             const std::string& option) {
    Key key{account, text::lower(pool_id)};
    ask<bool>([this, key, node_ids, option] {
        std::vector<Node*> nodes;
        int dedicated = 0, low_priority = 0;
        for (const std::string& id : node_ids) {
            Node* node = find_node(key, id);
            if (!node) throw BatchError(400, "InvalidPropertyValue", "The node " + id + " is not in the pool.", {{"PropertyName", "nodeList"}, {"PropertyValue", id}});
            if (std::find(nodes.begin(), nodes.end(), node) != nodes.end() || node->then == Node::Then::leave) continue;
            nodes.push_back(node);
            (node->dedicated ? dedicated : low_priority)++;
        }
        store_.update(key.first, kPools, key.second, [&](json& doc) {
            doc["targetDedicatedNodes"] = std::max(0, doc.value("targetDedicatedNodes", 0) - dedicated);
            doc["targetLowPriorityNodes"] = std::max(0, doc.value("targetLowPriorityNodes", 0) - low_priority);
            doc["_deallocation"] = option;
            return true;
        });
        Pool& pool = state_[key];
        for (Node* node : nodes) {
            if (node->running_tasks == 0 || stops_tasks(option)) {
                remove_node(pool, *node, task_reason_for(option));
                continue;
            }
            node->then = Node::Then::leave;
            node->state = "leavingpool";
            node->state_time = time::format_iso8601(time::now());
            trace("batch pool " + pool.id, "node " + node->id + " is leavingpool");
        }
        reconcile(key);
        return true;
    });
}

bool PoolNodes::set_scheduling(const std::string& account, const std::string& pool_id, const std::string& node_id, bool enabled,
                               const std::string& option) {
    Key key{account, text::lower(pool_id)};
    return ask<bool>([this, key, node_id, enabled, option] {
        Node* node = find_node(key, node_id);
        if (!node) return false;
        node->scheduling = enabled;
        if (!enabled && stops_tasks(option)) stop_node_tasks(*node, task_reason_for(option));
        reconcile(key);
        return true;
    });
}

}  // namespace bai::batch
