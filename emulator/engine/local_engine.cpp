#include "emulator/engine/local_engine.h"


#include <algorithm>
#include <cstdio>
#include <future>

#include "common/log/logger.h"
#include "common/text/ascii.h"
#include "emulator/arm/job_execution.h"
#include "emulator/arm/preview_api.h"
#include "emulator/arm/resource_ids.h"
#include "emulator/arm/resource_store.h"
#include "emulator/arm/resource_view.h"
#include "emulator/engine/docker_client.h"
#include "emulator/engine/engine_time.h"
#include "emulator/engine/node_setup.h"
#include "emulator/engine/writable_root.h"
#include "emulator/engine/process.h"
#include "emulator/validation/duration.h"

namespace bai::engine {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kJob = "job";
constexpr const char* kCluster = "cluster";

std::string address_of(int n) {
    // 127.0.1.1 .. 127.0.1.254, then 127.0.2.1 ...
    return "127.0." + std::to_string(1 + (n - 1) / 254) + "." + std::to_string(1 + (n - 1) % 254);
}

// As the service named them: tvm-<10 digits>_<n>-<yyyymmddthhmmssz>, with "-p" for a low-priority node.
std::string node_id(const std::string& cluster_key, int number, time::TimePoint at, bool low_priority) {
    std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::time_point_cast<std::chrono::seconds>(at));
    std::tm tm{};
    gmtime_r(&t, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%dt%H%M%Sz", &tm);
    unsigned long hash = std::hash<std::string>{}(cluster_key) % 10000000000UL;
    char id[96];
    std::snprintf(id, sizeof id, "tvm-%010lu_%d-%s%s", hash, number, stamp, low_priority ? "-p" : "");
    return id;
}

std::string directory_name(const ClusterSpec& spec, const std::string& key) {
    char hash[16];
    std::snprintf(hash, sizeof hash, "%08zx", std::hash<std::string>{}(key) & 0xffffffffu);
    return text::lower(spec.name) + "-" + hash;
}

// "python" when the PATH the nodes get has one (as on the service's images), else "python3".
std::string default_python() { return find_on_path("python", node_base_environment()) ? "python" : "python3"; }

}  // namespace

LocalEngine::LocalEngine(arm::ResourceStore& store, StorageAccess storage, EngineOptions options)
    : store_(store),
      storage_(storage),
      options_(std::move(options)),
      clock_(options_.clock ? *options_.clock : real_clock_),
      mpi_agent_(options_.nodes_dir / "bin" / "mpi-agent"),
      runtimes_(find_on_path("bwrap", node_base_environment()).value_or(""),
                find_on_path("docker", node_base_environment()).value_or(""), options_.nodes_dir.string()),
      reaper_(options_.nodes_dir / ".reaped") {
    if (options_.default_python.empty()) options_.default_python = default_python();
    gpu_pool_ = options_.gpu_pool ? options_.gpu_pool : std::make_shared<GpuPool>(options_.gpus);
    storage_.file_server_export = [this](const std::string& id) { return file_server_export(id); };
}

fs::path LocalEngine::file_server_disk(std::int64_t seq) const {
    return options_.nodes_dir.parent_path() / "fileservers" / std::to_string(seq);
}

// A file server's disk is a directory of the data directory, one per file server resource (by
// creation order: a file server deleted and created again gets a new, empty disk).
FileServerExport LocalEngine::file_server_export(const std::string& id) const {
    std::optional<arm::StoredResource> server = store_.get(id);
    if (!server || server->type != arm::kind::kFileServer) {
        throw std::runtime_error("cannot mount the file server " + id + ": there is no such file server");
    }
    FileServerExport out;
    out.directory = file_server_disk(server->seq);
    const nlohmann::json& settings = server->body["properties"].value("mountSettings", nlohmann::json::object());
    out.mount_point = settings.is_object() ? settings.value("mountPoint", "/mnt/data") : "/mnt/data";
    std::error_code ec;
    fs::create_directories(out.directory, ec);
    if (ec) throw std::runtime_error("cannot make the disk of file server " + id + ": " + ec.message());
    return out;
}

LocalEngine::~LocalEngine() { stop(); }

void LocalEngine::start() {
    std::error_code ec;
    // Nodes do not survive the emulator: what a previous run left is cleared, and the clusters
    // get new nodes.
    for (fs::directory_iterator it(options_.nodes_dir, ec), end; !ec && it != end; it.increment(ec)) {
        remove_tree(it->path(), ec);
    }
    fs::create_directories(options_.nodes_dir, ec);
    // Nor do their containers: those a killed emulator left are removed.
    if (!runtimes_.docker().empty()) remove_owned_containers(runtimes_.docker(), runtimes_.owner());
    sweep_file_server_disks();
    if (options_.hosts) {
        // Told on the hosts' thread; acted on, as every change, on the engine's.
        options_.hosts->on_loss = [this](const std::string& node_id, HostLoss loss, const std::string& why) {
            post([this, node_id, loss, why] { host_lost(node_id, loss, why); });
        };
        options_.hosts->start();
    }
    write_mpi_agent(mpi_agent_);
    {
        std::error_code ec;
        const fs::path beside = fs::read_symlink("/proc/self/exe", ec).parent_path() / "bai-node-ssh";
        if (!ec && fs::is_regular_file(beside, ec)) node_ssh_ = beside;
    }
    recover();
    schedule();
    publish();
    clock_.set_serial(true);
    thread_ = std::thread([this, turn = Participation(clock_)]() mutable {
        turn.begin();
        loop();
    });
}

void LocalEngine::stop() {
    if (!thread_.joinable()) return;
    // Threads blocked in a real process would otherwise hold everyone's turn until it ends.
    clock_.set_serial(false);
    if (!events_.stop()) return;
    thread_.join();
    for (auto& [key, job] : running_) job.control->cancel("the emulator stopped");
    for (auto& [key, job] : running_) job.thread.join();
    running_.clear();
    for (auto& [key, cluster] : clusters_) {
        for (auto& slot : cluster.nodes) {
            if (slot->setup) slot->setup->cancel("the emulator stopped");
        }
        for (auto& slot : cluster.nodes) {
            if (slot->setup_thread.joinable()) slot->setup_thread.join();
            slot->volumes->release();
        }
    }
    for (auto& slot : leaving_setups_) {
        if (slot->setup_thread.joinable()) slot->setup_thread.join();
        slot->volumes->release();
    }
    leaving_setups_.clear();
    if (options_.hosts) options_.hosts->stop();  // every host given back
    reaper_.drain();
}

void LocalEngine::post(std::function<void()> event) { events_.post(std::move(event)); }

void LocalEngine::loop() {
    while (auto batch = events_.take(next_deadline_.value_or(clock_.now() + std::chrono::hours(1)))) {
        for (const auto& event : *batch) run_event(event);
        run_event([this] {
            check_deadlines();
            sweep_staged_blocks();
            schedule();
            publish();
        });
    }
}

void LocalEngine::trace(const std::string& actor, const std::string& event) const {
    if (options_.trace) options_.trace(actor, event);
}

void LocalEngine::note(const std::string& cluster_key, const std::string& node, const std::string& job_key,
                       const std::string& job_id, const std::string& event, const std::string& detail) {
    history_.record({now_text(clock_), cluster_key, node, job_key, job_id, event, detail});
}

void LocalEngine::run_event(const std::function<void()>& event) {
    try {
        event();
    } catch (const std::exception& e) {
        log::error(std::string("job engine: ") + e.what());
    }
}

// ---- clusters and nodes ----

void LocalEngine::load_cluster(const std::string& cluster_id, bool created) {
    std::optional<arm::StoredResource> stored = store_.get(cluster_id);
    if (!stored) return;
    ClusterSpec spec;
    try {
        spec = read_cluster_spec(stored->body);
    } catch (const std::exception& e) {
        log::warning("cluster " + cluster_id + " cannot get nodes: " + e.what());
        return;
    }
    if (auto old = clusters_.find(stored->key); old != clusters_.end() && old->second.deleted) retire_cluster(old);
    auto [it, inserted] = clusters_.try_emplace(stored->key);
    ClusterState& cluster = it->second;
    cluster.key = stored->key;
    const bool was_auto = cluster.spec.auto_scale.has_value();
    cluster.spec = spec;
    if (inserted) {
        cluster.dir = options_.nodes_dir / directory_name(spec, stored->key);
        for (int n = 2; std::any_of(clusters_.begin(), clusters_.end(),
                                    [&](const auto& c) { return &c.second != &cluster && c.second.dir == cluster.dir; });
             ++n) {
            cluster.dir = options_.nodes_dir / (directory_name(spec, stored->key) + "-" + std::to_string(n));
        }
        std::string workspace = cluster_id.substr(0, text::lower(cluster_id).rfind("/clusters/"));
        if (auto ws = store_.get(workspace)) cluster.location = ws->body.value("location", "");
        cluster.errors = stored->body["properties"].value("errors", json::array());
        if (!cluster.errors.is_array()) cluster.errors = json::array();
    }
    if (spec.manual_target) {
        cluster.target = *spec.manual_target;
    } else {
        if (inserted || !was_auto) {
            cluster.target = created ? spec.auto_scale->initial : spec.auto_scale->minimum;
            cluster.idle_since = clock_.now();
        }
        cluster.target = std::clamp(cluster.target, spec.auto_scale->minimum, spec.auto_scale->ceiling());
    }
    if (options_.hosts) return;  // the GPUs are the hosts', which the host system gives
    int gpus_wanted = spec.vm_size.gpus * cluster.target;
    int gpus_held = 0;
    for (auto& slot : cluster.nodes) gpus_held += static_cast<int>(slot->node.gpus.size());
    const int gpus_free = static_cast<int>(gpu_pool_->free_count());
    if (!options_.strict_gpus && gpus_wanted > gpus_held + gpus_free) {
        add_cluster_error(cluster, "InsufficientGpus",
                          std::to_string(cluster.target) + " node(s) of " + std::string(spec.vm_size.name) + " need " +
                              std::to_string(gpus_wanted) + " GPU(s); this machine has " +
                              std::to_string(gpus_held + gpus_free) +
                              " free for them: the nodes run with the GPUs that exist");
    }
}

void LocalEngine::add_cluster_error(ClusterState& cluster, const std::string& code, const std::string& message) {
    for (const json& e : cluster.errors) {
        if (e.value("code", "") == code && e.value("message", "") == message) return;
    }
    cluster.errors.push_back(arm::execution_error(code, message));
}

void LocalEngine::add_node(ClusterState& cluster) {
    auto slot = std::make_unique<NodeSlot>();
    // On hosts that see this machine's disk but not its mounts, shares are links to their directories.
    slot->volumes = std::make_shared<AttachedVolumes>(
        MountSettings{&faults_, options_.share_passthrough, options_.bind_shares, options_.hosts != nullptr,
                      options_.hosts != nullptr && options_.remote_shares});
    Node& node = slot->node;
    int n = 1;
    while (addresses_in_use_.count(n)) ++n;
    addresses_in_use_.insert(n);
    slot->address_number = n;
    node.address = address_of(n);
    node.id = node_id(cluster.key, cluster.next_node++, clock_.now(), cluster.spec.low_priority);
    node.cluster_key = cluster.key;
    node.root = cluster.dir / node.id;
    node.low_priority = cluster.spec.low_priority;
    // On another system's hosts, the node's GPUs are its host's (this machine's are not its).
    if (!options_.hosts) node.gpus = gpu_pool_->take(cluster.spec.vm_size.gpus);
    node.hosts = options_.hosts;
    node.state = NodeState::preparing;
    slot->setup = std::make_shared<RunControl>();
    Node copy = node;
    ClusterSpec spec = cluster.spec;
    std::shared_ptr<RunControl> control = slot->setup;
    std::string key = cluster.key;
    std::shared_ptr<AttachedVolumes> volumes = slot->volumes;
    slot->setup_thread = std::thread([this, copy, spec, control, key, volumes, turn = Participation(clock_)]() mutable {
        turn.begin();
        if (copy.hosts) {
            // First a host for it (a Slurm allocation), however long the host system takes.
            try {
                std::optional<HostGrant> grant = copy.hosts->acquire(copy, spec, *control);
                if (!grant) {
                    post([this, key, id = copy.id] { node_ready(key, id, false, "NodeRemoved", "the node was removed"); });
                    return;
                }
                copy.address = grant->address;
                copy.gpus = grant->gpus;
                copy.gpu_devices = grant->gpu_devices;
                post([this, key, id = copy.id, grant = *grant] { node_placed(key, id, grant); });
            } catch (const std::exception& e) {
                post([this, key, id = copy.id, why = std::string(e.what())] { node_ready(key, id, false, "AllocationFailed", why); });
                return;
            }
        }
        NodeSetupResult result = set_up_node(copy, spec, storage_, *control, *volumes);
        post([this, key, id = copy.id, result] { node_ready(key, id, result.usable, result.error_code, result.message); });
    });
    log::info("cluster " + cluster.spec.name + ": node " + node.id + " at " + node.address + " joins");
    trace("cluster " + cluster.spec.name, "node " + node.id + " joins");
    note(cluster.key, node.id, "", "", "joins");
    cluster.nodes.push_back(std::move(slot));
}

void LocalEngine::node_ready(const std::string& cluster_key, const std::string& node_id, bool usable,
                             const std::string& code, const std::string& message) {
    for (auto left = leaving_setups_.begin(); left != leaving_setups_.end(); ++left) {
        if ((*left)->node.id != node_id) continue;
        std::unique_ptr<NodeSlot> slot = std::move(*left);
        leaving_setups_.erase(left);
        slot->setup_thread.join();
        return finish_removal(*slot);
    }
    auto it = clusters_.find(cluster_key);
    if (it == clusters_.end()) return;
    ClusterState& cluster = it->second;
    for (auto& slot : cluster.nodes) {
        if (slot->node.id != node_id) continue;
        // It has posted this and left the clock's turns: joining it waits for nobody's turn.
        if (slot->setup_thread.joinable()) slot->setup_thread.join();
        slot->setup.reset();
        if (slot->node.state != NodeState::preparing) return;
        slot->node.state = usable ? NodeState::idle : NodeState::unusable;
        trace("cluster " + cluster.spec.name, "node " + node_id + (usable ? " is idle" : " is unusable: " + code));
        note(cluster.key, node_id, "", "", usable ? "idle" : "unusable", usable ? "" : code);
        if (!usable) {
            log::warning("cluster " + cluster.spec.name + ": node " + node_id + " is unusable: " + message);
            add_cluster_error(cluster, code, message);
        }
        write_cluster(cluster);
        return;
    }
}

void LocalEngine::node_placed(const std::string& cluster_key, const std::string& node_id, const HostGrant& grant) {
    auto it = clusters_.find(cluster_key);
    if (it == clusters_.end()) return;
    for (auto& slot : it->second.nodes) {
        if (slot->node.id != node_id) continue;
        slot->node.address = grant.address;
        slot->node.gpus = grant.gpus;
        slot->node.gpu_devices = grant.gpu_devices;
        log::info("cluster " + it->second.spec.name + ": node " + node_id + " placed on " + grant.address +
                  (grant.gpus.empty() ? "" : " with " + std::to_string(grant.gpus.size()) + " GPU(s)"));
        note(cluster_key, node_id, "", "", "placed", grant.address);
        return;
    }
}

void LocalEngine::host_lost(const std::string& node_id, HostLoss loss, const std::string& why) {
    size_t index = 0;
    ClusterState* cluster = cluster_of_node(node_id, index);
    if (!cluster) return;
    Node& node = cluster->nodes[index]->node;
    log::warning("cluster " + cluster->spec.name + ": node " + node_id + " lost its host: " + why);
    if (loss == HostLoss::failed) {
        trace("cluster " + cluster->spec.name, "node " + node_id + " fails");
        note(cluster->key, node_id, "", "", "fails", why);
        add_cluster_error(*cluster, "NodeFailed", "The node " + node_id + " failed and is unusable: " + why);
        node.failed = true;
        if (node.state == NodeState::running) {
            stop_job(node.job_key, "node failed");
        } else {
            if (cluster->nodes[index]->setup) cluster->nodes[index]->setup->cancel("node failed");
            node.state = NodeState::unusable;
        }
    } else {
        // Pre-empted, or given back by someone else: the node goes (its job requeued) and the
        // cluster's target brings a new one.
        const bool preempted = loss == HostLoss::preempted;
        trace("cluster " + cluster->spec.name, "node " + node_id + (preempted ? " is pre-empted" : " is released"));
        note(cluster->key, node_id, "", "", preempted ? "preempted" : "released", why);
        if (node.state == NodeState::running) {
            node.remove_after_job = true;
            stop_job(node.job_key, preempted ? "preempted" : "requeue");
        } else {
            remove_node(*cluster, index, preempted ? "pre-empted" : "its host was released");
        }
    }
    write_cluster(*cluster);
}

void LocalEngine::remove_node(ClusterState& cluster, size_t index, const std::string& why) {
    std::unique_ptr<NodeSlot> slot = std::move(cluster.nodes[index]);
    cluster.nodes.erase(cluster.nodes.begin() + static_cast<long>(index));
    log::info("cluster " + cluster.spec.name + ": node " + slot->node.id + " leaves (" + why + ")");
    trace("cluster " + cluster.spec.name, "node " + slot->node.id + " leaves (" + why + ")");
    note(cluster.key, slot->node.id, "", "", "leaves", why);
    if (!slot->setup_thread.joinable()) return finish_removal(*slot);
    // Its setup still runs, or has not begun (on a virtual clock it may need a turn, which this
    // thread holds): cancelled, it reports to node_ready, which finishes the removal.
    slot->setup->cancel(why);
    leaving_setups_.push_back(std::move(slot));
}

void LocalEngine::finish_removal(NodeSlot& slot) {
    Node& node = slot.node;
    addresses_in_use_.erase(slot.address_number);
    if (!node.hosts) gpu_pool_->give_back(node.gpus);  // (a host's GPUs are its host system's)
    slot.volumes->release();
    if (node.hosts) {
        node.hosts->remove_from_host(node.id, node.root);  // where the host has a copy of its own
        node.hosts->release(node.id);
    }
    reaper_.remove(node.root);
}

// Brings the cluster's nodes to its target: new nodes join, surplus ones leave as the
// deallocation option says.
void LocalEngine::resize(ClusterState& cluster) {
    int live = 0;
    for (auto& slot : cluster.nodes) live += slot->node.remove_after_job ? 0 : 1;
    cluster.short_of_gpus = false;
    while (live < cluster.target) {
        if (options_.strict_gpus && static_cast<int>(gpu_pool_->free_count()) < cluster.spec.vm_size.gpus) {
            cluster.short_of_gpus = true;
            add_cluster_error(cluster, "InsufficientGpus",
                              "--strict-gpus: " + std::to_string(cluster.target - live) + " node(s) of " +
                                  std::string(cluster.spec.vm_size.name) + " are not allocated: each needs " +
                                  std::to_string(cluster.spec.vm_size.gpus) + " GPU(s) and this machine has " +
                                  std::to_string(gpu_pool_->free_count()) + " free");
            break;
        }
        add_node(cluster);
        ++live;
    }
    if (live <= cluster.target) return;
    std::vector<NodeState> states;
    std::vector<size_t> candidates;
    for (size_t i = 0; i < cluster.nodes.size(); ++i) {
        if (cluster.nodes[i]->node.remove_after_job) continue;
        states.push_back(cluster.nodes[i]->node.state);
        candidates.push_back(i);
    }
    std::vector<std::string> leaving;
    for (size_t pick : nodes_to_remove(states, live - cluster.target)) leaving.push_back(cluster.nodes[candidates[pick]]->node.id);
    for (const std::string& id : leaving) {
        size_t index = 0;
        while (cluster.nodes[index]->node.id != id) ++index;
        Node& node = cluster.nodes[index]->node;
        if (node.state != NodeState::running) {
            remove_node(cluster, index, "the cluster shrinks");
            continue;
        }
        switch (cluster.spec.deallocation) {
            case Deallocation::wait_for_job_completion:
                node.remove_after_job = true;
                break;
            case Deallocation::terminate:
                node.remove_after_job = true;
                stop_job(node.job_key, "deallocated");
                break;
            case Deallocation::requeue:
                node.remove_after_job = true;
                stop_job(node.job_key, "requeue");
                break;
        }
    }
}

void LocalEngine::drop_cluster(const std::string& key, const std::string& name) {
    auto it = clusters_.find(key);
    for (auto& [job_key, job] : running_) {
        if (job.cluster_key == key) job.control->cancel("cluster deleted");
    }
    for (const QueuedJob& job : queues_[key]) {
        store_.update(job.id, [&](json& body) {
            if (body["properties"].value("executionState", "") != "queued") return false;
            arm::end_execution(body, "failed", std::nullopt,
                            json::array({arm::execution_error("ClusterDeleted", "The cluster " + name + " of the job was deleted")}),
                            now_text(clock_));
            return true;
        });
    }
    queues_.erase(key);
    if (it == clusters_.end()) return;
    it->second.deleted = true;
    for (auto& slot : it->second.nodes) slot->node.remove_after_job = true;
    for (size_t i = it->second.nodes.size(); i-- > 0;) {
        if (it->second.nodes[i]->node.state != NodeState::running) remove_node(it->second, i, "the cluster was deleted");
    }
    if (it->second.nodes.empty()) forget_cluster(it);
}

void LocalEngine::retire_cluster(std::map<std::string, ClusterState>::iterator it) {
    const std::string old_key = it->first;
    const std::string new_key = old_key + "#retired-" + std::to_string(++retired_clusters_);
    auto handle = clusters_.extract(it);
    handle.key() = new_key;
    ClusterState& cluster = handle.mapped();
    cluster.key = new_key;
    for (auto& slot : cluster.nodes) slot->node.cluster_key = new_key;
    for (auto& [job_key, job] : running_) {
        if (job.cluster_key == old_key) job.cluster_key = new_key;
    }
    clusters_.insert(std::move(handle));
}

void LocalEngine::forget_cluster(std::map<std::string, ClusterState>::iterator it) {
    std::error_code ec;
    remove_tree(it->second.dir, ec);
    clusters_.erase(it);
}

void LocalEngine::write_cluster(ClusterState& cluster) {
    if (cluster.deleted) return;
    // Each node counted once: a node that leaves after its job counts as running until then.
    int counts[5] = {0, 0, 0, 0, 0};
    int live = 0, leaving = 0;
    for (auto& slot : cluster.nodes) {
        const Node& n = slot->node;
        counts[static_cast<int>(n.state)]++;
        if (n.remove_after_job) {
            ++leaving;
        } else {
            ++live;
        }
    }
    // Short of GPUs under --strict-gpus, the cluster is steady below its target (as the cloud's
    // when out of quota).
    bool resizing = (live != cluster.target && !cluster.short_of_gpus) || leaving > 0 ||
                    counts[static_cast<int>(NodeState::preparing)] > 0;
    std::string allocation = resizing ? "resizing" : "steady";
    const std::string now = now_text(clock_);
    json node_counts{{"idleNodeCount", counts[static_cast<int>(NodeState::idle)]},
                     {"runningNodeCount", counts[static_cast<int>(NodeState::running)]},
                     {"preparingNodeCount", counts[static_cast<int>(NodeState::preparing)]},
                     {"unusableNodeCount", counts[static_cast<int>(NodeState::unusable)]},
                     {"leavingNodeCount", counts[static_cast<int>(NodeState::leaving)]}};
    const int current = static_cast<int>(cluster.nodes.size());
    json state{allocation, current, node_counts, cluster.errors};
    if (state == cluster.written) return;  // called after every batch of events: mostly unchanged
    store_.update(cluster.spec.id, [&](json& body) {
        json& p = body["properties"];
        bool changed = p.value("allocationState", "") != allocation || p.value("currentNodeCount", -1) != current ||
                       p.value("nodeStateCounts", json()) != node_counts ||
                       p.value("errors", json::array()) != cluster.errors;
        if (!changed) return false;
        if (p.value("allocationState", "") != allocation) p["allocationStateTransitionTime"] = now;
        p["allocationState"] = allocation;
        p["currentNodeCount"] = current;
        p["nodeStateCounts"] = node_counts;
        if (cluster.errors.empty()) {
            p.erase("errors");
        } else {
            p["errors"] = cluster.errors;
        }
        return true;
    });
    cluster.written = std::move(state);
}

LocalEngine::ClusterState* LocalEngine::cluster_of_node(const std::string& node_id, size_t& index) {
    for (auto& [key, cluster] : clusters_) {
        for (index = 0; index < cluster.nodes.size(); ++index) {
            if (cluster.nodes[index]->node.id == node_id) return &cluster;
        }
    }
    return nullptr;
}

// ---- jobs ----

void LocalEngine::enqueue(const std::string& job_id) {
    if (std::optional<arm::StoredResource> job = store_.get(job_id)) enqueue(*job);
}

void LocalEngine::enqueue(const arm::StoredResource& job) {
    const json& p = job.body["properties"];
    if (p.value("executionState", "") != "queued") return;
    QueuedJob q{job.key, job.body.value("id", job.key), priority_rank(p.value("schedulingPriority", json("normal"))),
                job.seq, p.value("nodeCount", 1)};
    std::string cluster_key = arm::resource_key(p["cluster"].value("id", ""));
    std::vector<QueuedJob>& queue = queues_[cluster_key];
    // The queue is ordered by (priority, seq), and a job's are fixed: a job queued already is in
    // the range of its own, found in log(n) (a start with 100,000 queued jobs enqueues them all).
    auto [first, last] = std::equal_range(queue.begin(), queue.end(), q, runs_before);
    for (auto it = first; it != last; ++it) {
        if (it->key == q.key) return;
    }
    if (running_.count(q.key)) return;
    queue.insert(last, q);
    note(cluster_key, "", q.key, q.id, "queued");
}

void LocalEngine::recover() {
    for (const arm::StoredResource& cluster : store_.all_of_type(kCluster)) {
        load_cluster(cluster.body.value("id", cluster.key), false);
    }
    const std::string now = now_text(clock_);
    // Finished jobs need nothing of the engine: only the others are read, one at a time.
    for (const std::string& key : store_.keys_in_states(kJob, {"queued", "running", "terminating"})) {
        std::optional<arm::StoredResource> stored = store_.get(key);
        if (!stored) continue;
        const arm::StoredResource& job = *stored;
        std::string state = job.body["properties"].value("executionState", "");
        if (state == "queued") {
            enqueue(job);  // from the document just read, not read again
        } else if (state == "running") {
            store_.update(job.key, [&](json& body) {
                arm::requeue_execution(body, now);
                return true;
            });
            log::warning("job " + job.body.value("id", job.key) + " was running when the emulator stopped: requeued");
            enqueue(job.body.value("id", job.key));
        } else if (state == "terminating") {
            store_.update(job.key, [&](json& body) {
                arm::end_execution(body, "failed", std::nullopt,
                                json::array({arm::job_terminated_error()}), now);
                return true;
            });
        }
    }
    for (auto& [key, cluster] : clusters_) write_cluster(cluster);
}

void LocalEngine::schedule() {
    const time::TimePoint now = clock_.now();
    for (auto& [key, cluster] : clusters_) {
        if (cluster.deleted) continue;
        std::vector<QueuedJob>& queue = queues_[key];
        if (cluster.spec.auto_scale) {
            int demand = 0;
            for (const QueuedJob& q : queue) demand += q.node_count <= cluster.spec.auto_scale->maximum ? q.node_count : 0;
            bool busy = demand > 0;
            for (auto& [job_key, job] : running_) {
                if (job.cluster_key == key) {
                    demand += static_cast<int>(job.node_ids.size());
                    busy = true;
                }
            }
            if (busy) {
                cluster.idle_since.reset();
            } else if (!cluster.idle_since) {
                cluster.idle_since = now;
            }
            bool idle_long = cluster.idle_since && now - *cluster.idle_since >= options_.autoscale_idle;
            cluster.target = autoscale_target(*cluster.spec.auto_scale, demand, cluster.target, idle_long);
        }
        resize(cluster);
        std::vector<NodeSlot*> idle;
        for (auto& slot : cluster.nodes) {
            if (slot->node.state == NodeState::idle && !slot->node.remove_after_job) idle.push_back(slot.get());
        }
        int limit = cluster.spec.auto_scale ? cluster.spec.auto_scale->ceiling() : cluster.target;
        std::vector<size_t> starts = jobs_to_start(queue, static_cast<int>(idle.size()), limit);
        size_t next_idle = 0;
        std::vector<QueuedJob> started;
        for (size_t index : starts) {
            std::vector<NodeSlot*> nodes(idle.begin() + static_cast<long>(next_idle),
                                         idle.begin() + static_cast<long>(next_idle + queue[index].node_count));
            next_idle += queue[index].node_count;
            started.push_back(queue[index]);
            start_job(cluster, queue[index], nodes);
        }
        std::erase_if(queue, [&](const QueuedJob& q) {
            return std::any_of(started.begin(), started.end(), [&](const QueuedJob& s) { return s.key == q.key; });
        });
        write_cluster(cluster);
    }
    // The next time something is due: a wall-clock limit, an idle auto-scale cluster.
    std::optional<time::TimePoint> next;
    auto consider = [&](time::TimePoint t) {
        if (!next || t < *next) next = t;
    };
    for (auto& [key, job] : running_) {
        if (!job.control->cancelled()) consider(job.deadline);  // a stopped one is only ending
    }
    for (auto& [key, cluster] : clusters_) {
        if (cluster.spec.auto_scale && cluster.idle_since && cluster.target > cluster.spec.auto_scale->minimum) {
            consider(*cluster.idle_since + options_.autoscale_idle);
        }
    }
    next_deadline_ = next;
}

void LocalEngine::sweep_staged_blocks() {
    // The loop wakes at least once an hour of the clock (loop()), so a sweep an hour is enough.
    const time::TimePoint now = clock_.now();
    if (next_staged_sweep_ && now < *next_staged_sweep_) return;
    next_staged_sweep_ = now + std::chrono::hours(1);
    storage::StagedBlocks dropped = storage_.blobs.discard_staged_before(now - storage::BlobStore::kStagedBlockLifetime);
    if (dropped.blocks == 0) return;
    std::string what = std::to_string(dropped.blocks) + " uncommitted blocks of " + std::to_string(dropped.blobs) +
                       " blobs (" + std::to_string(dropped.bytes) + " bytes) staged over a week ago";
    log::info("discarded " + what);
    trace("storage", "discarded " + what);
}

void LocalEngine::cluster_created(const std::string& id) {
    post([this, id] { load_cluster(id, true); });
}

void LocalEngine::cluster_scaled(const std::string& id) {
    post([this, id] { load_cluster(id, false); });
}

void LocalEngine::cluster_deleted(const arm::StoredResource& cluster) {
    std::string key = cluster.key, name = cluster.body.value("name", "");
    post([this, key, name] { drop_cluster(key, name); });
}

void LocalEngine::job_created(const std::string& id) {
    post([this, id] { enqueue(id); });
}

void LocalEngine::job_terminate(const std::string& job_id) {
    std::string was;
    std::optional<arm::StoredResource> job = store_.update(job_id, [&](json& body) {
        json& p = body["properties"];
        was = p.value("executionState", "queued");
        const std::string now = now_text(clock_);
        if (was == "queued") {
            arm::end_execution(body, "failed", std::nullopt,
                            json::array({arm::job_terminated_error()}), now);
            return true;
        }
        if (was != "running") return false;
        p["executionState"] = "terminating";
        p["executionStateTransitionTime"] = now;
        return true;
    });
    if (!job) return;
    std::string key = job->key;
    std::string cluster_key = arm::resource_key(job->body["properties"]["cluster"].value("id", ""));
    post([this, key, cluster_key, id = job->body.value("id", key)] {
        if (running_.count(key)) return stop_job(key, "terminate");
        if (std::erase_if(queues_[cluster_key], [&](const QueuedJob& q) { return q.key == key; }) > 0) {
            note(cluster_key, "", key, id, "ends", "stopped: terminate");
        }
    });
}

// A disk whose file server is gone (the emulator died between the delete and the disk's removal)
// is removed at start.
void LocalEngine::sweep_file_server_disks() {
    std::set<std::string> live;
    for (const arm::StoredResource& server : store_.all_of_type(arm::kind::kFileServer)) {
        live.insert(std::to_string(server.seq));
    }
    std::error_code ec;
    for (fs::directory_iterator it(options_.nodes_dir.parent_path() / "fileservers", ec), end; !ec && it != end;
         it.increment(ec)) {
        if (live.count(it->path().filename().string())) continue;
        std::error_code removed;
        remove_tree(it->path(), removed);
        if (removed) {
            log::warning("could not remove the orphaned file server disk " + it->path().string() + ": " + removed.message());
        } else {
            log::info("removed the disk of a file server that no longer exists: " + it->path().string());
        }
    }
}

void LocalEngine::file_server_deleted(const arm::StoredResource& file_server) {
    fs::path disk = file_server_disk(file_server.seq);
    post([disk] {
        std::error_code ec;
        remove_tree(disk, ec);
        if (ec) log::warning("could not remove the file server disk " + disk.string() + ": " + ec.message());
    });
}

void LocalEngine::job_deleted(const arm::StoredResource& job) {
    std::string key = job.key;
    std::string cluster_key = arm::resource_key(job.body["properties"]["cluster"].value("id", ""));
    post([this, key, cluster_key, id = job.body.value("id", key)] {
        {
            std::lock_guard guard(snapshot_mutex_);
            job_nodes_.erase(key);
            job_logs_.erase(key);
        }
        if (running_.count(key)) return stop_job(key, "deleted");
        if (std::erase_if(queues_[cluster_key], [&](const QueuedJob& q) { return q.key == key; }) > 0) {
            note(cluster_key, "", key, id, "ends", "stopped: deleted");
        }
    });
}

}  // namespace bai::engine
