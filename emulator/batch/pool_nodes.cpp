#include "emulator/batch/pool_nodes.h"

#include <cstdio>
#include <future>

#include "common/crypto/digest.h"
#include "common/log/logger.h"
#include "common/text/ascii.h"
#include "common/text/json_value_at.h"
#include "common/time/timestamps.h"
#include "emulator/batch/autoscale_formula.h"
#include "emulator/batch/batch_error.h"
#include "emulator/batch/node_certificates.h"
#include "emulator/batch/node_endpoints.h"
#include "emulator/batch/pool_rules.h"
#include "emulator/validation/vm_sizes.h"
#include "emulator/batch/command_line.h"
#include "emulator/batch/task_process.h"
#include "emulator/batch/task_states.h"
#include "emulator/engine/docker_client.h"
#include "emulator/engine/job_run.h"
#include "emulator/engine/node_setup.h"
#include "emulator/engine/process.h"
#include "emulator/engine/writable_root.h"

namespace bai::batch {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// How long a pool is `resizing` before the nodes it wants join it.
constexpr std::chrono::milliseconds kAllocateTime{500};
// How long a node is `creating` (its VM made), then `starting` (booting) before its start task
// runs: long enough to be seen.
constexpr std::chrono::milliseconds kCreateTime{500};
constexpr std::chrono::milliseconds kBootTime{500};
// How often the service samples a pool's metrics for its auto-scale formula.
constexpr std::chrono::seconds kSamplePeriod{30};

// A time point of the nodes' clock as the auto-scale samples count it.
double seconds_of(time::TimePoint t) { return std::chrono::duration<double>(t.time_since_epoch()).count(); }

// "tvmps_" and 64 hex digits, "_d" for a dedicated node, "_p" for a low-priority one, as the
// service names them; stable for an account, pool and node number.
std::string node_id(const std::string& account, const std::string& pool, int number, bool dedicated) {
    std::string digest = crypto::hmac_sha256("batch-node", account + "/" + pool + "/" + std::to_string(number));
    std::string hex;
    char byte[3];
    for (unsigned char c : digest) {
        std::snprintf(byte, sizeof byte, "%02x", c);
        hex += byte;
    }
    return "tvmps_" + hex + (dedicated ? "_d" : "_p");
}

// 127.0.128.1 onwards: beside the Batch AI nodes' 127.0.1.x.
std::string address_of(int n) { return "127.0." + std::to_string(128 + n / 254) + "." + std::to_string(1 + n % 254); }

}  // namespace

PoolNodes::PoolNodes(EntityStore& store, fs::path root, NodeOptions options)
    : store_(store),
      root_(std::move(root)),
      clock_(options.clock ? *options.clock : real_clock_),
      workloads_(options.workloads),
      images_(std::move(options.images)),
      gpus_(std::move(options.gpus)),
      trace_(std::move(options.trace)),
      packages_(std::move(options.packages)),
      node_ssh_(std::move(options.node_ssh)),
      bwrap_(engine::find_on_path("bwrap", engine::node_base_environment({})).value_or("")),
      container_options_{options.container_runtime, images_, options.strict_images},
      runtimes_(bwrap_, engine::find_on_path("docker", engine::node_base_environment({})).value_or(""), root_.string()) {}

PoolNodes::~PoolNodes() { stop(); }

void PoolNodes::start() {
    std::error_code ec;
    engine::remove_tree(root_, ec);
    fs::create_directories(root_, ec);
    // Nor do their containers: those a killed emulator left are removed.
    if (!runtimes_.docker().empty()) engine::remove_owned_containers(runtimes_.docker(), runtimes_.owner());
    // Queued before the thread starts, which takes them as one batch: on a virtual clock, how
    // often it sleeps and wakes must not depend on when they arrive.
    for (const StoredEntity& pool : store_.all(kPools)) pool_changed(pool.account, pool.body.value("id", ""));
    auto recovered = std::make_shared<std::promise<void>>();
    std::future<void> recovery = recovered->get_future();
    post([this, recovered] {
        try {
            recover_tasks();
            recover_schedules();
        } catch (...) {
            recovered->set_value();
            throw;
        }
        recovered->set_value();
    });
    thread_ = std::thread([this, turn = engine::Participation(clock_)]() mutable {
        turn.begin();
        loop();
    });
    // The first request after a crash sees what recovery made of the tasks that were running (requeued),
    // not the `running` they were stored with.
    if (recovery.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
        log::warning("batch nodes: the tasks of the previous run were not recovered within 30 s");
    }
}

void PoolNodes::stop() {
    if (!thread_.joinable()) return;
    clock_.set_serial(false);  // threads in a real process would hold everyone's turn
    if (!events_.stop()) return;
    thread_.join();
    for (auto& [key, run] : running_) run.control->cancel("the emulator stopped");
    for (auto& [key, run] : running_) run.thread.join();
    running_.clear();
    for (auto& [key, pool] : state_) {
        for (auto& node : pool.nodes) cancel_node(*node, "the emulator stopped");
        for (auto& node : pool.nodes) {
            if (node->start_task.joinable()) node->start_task.join();
        }
    }
    for (auto& node : leaving_) {
        if (node->start_task.joinable()) node->start_task.join();
    }
    leaving_.clear();
    for (auto& [serial, side] : side_runs_) side.control->cancel("the emulator stopped");
    for (auto& [serial, thread] : side_threads_) thread.join();
    side_threads_.clear();
    side_runs_.clear();
    // The nodes go with the emulator: their time ends now.
    std::map<std::string, std::vector<NodeSession>> ended;
    for (auto& [key, pool] : state_) {
        for (auto& node : pool.nodes) ended[key.first].push_back({pool.id, node->vm_size, node->dedicated, node->joined, clock_.now()});
    }
    for (const auto& account_sessions : ended) {  // (no structured binding: clang 14 cannot capture one)
        const std::vector<NodeSession>& sessions = account_sessions.second;
        update_usage(account_sessions.first, [&](json& record) {
            for (const NodeSession& session : sessions) record_session(record, session);
        });
    }
    state_.clear();
    std::error_code ec;
    engine::remove_tree(root_, ec);
}

void throw_no_answer() { throw BatchError(500, "InternalServerError", "The Batch nodes did not answer"); }

void PoolNodes::post(std::function<void()> event) { events_.post(std::move(event)); }

void PoolNodes::trace(const std::string& actor, const std::string& event) const {
    if (trace_) trace_(actor, event);
}

void PoolNodes::at(time::TimePoint when, std::function<void()> event) { timers_.emplace(when, std::move(event)); }

void PoolNodes::loop() {
    auto run = [](const std::function<void()>& event) {
        try {
            event();
        } catch (const std::exception& e) {
            log::error(std::string("batch nodes: ") + e.what());
        }
    };
    for (;;) {
        std::optional<time::TimePoint> next;
        if (!timers_.empty()) next = timers_.begin()->first;
        std::optional<engine::EventQueue::Batch> batch = events_.take(next);
        if (!batch) return;
        for (const auto& event : *batch) run(event);
        while (!timers_.empty() && timers_.begin()->first <= clock_.now()) {
            std::function<void()> event = std::move(timers_.begin()->second);
            timers_.erase(timers_.begin());
            run(event);
        }
    }
}

void PoolNodes::pool_changed(const std::string& account, const std::string& pool_id) {
    Key key{account, text::lower(pool_id)};
    post([this, key] { reconcile(key); });
}

void PoolNodes::pool_deleting(const std::string& account, const std::string& pool_id) {
    Key key{account, text::lower(pool_id)};
    post([this, key] {
        auto it = state_.find(key);
        if (it != state_.end()) it->second.deleting = true;
        reconcile(key);
    });
}

// Brings the pool's nodes to its targets (none when it is being deleted): new nodes join; surplus
// ones leave, those not yet idle first, then idle ones, newest first.
// A pool's formula is first evaluated kAllocateTime after auto-scaling is enabled (the service's
// recordings show none yet right after the enable), then whenever reconciled.
bool PoolNodes::formula_due(const Key& key, Pool& pool) {
    const time::TimePoint now = clock_.now();
    if (!pool.auto_scale_since) {
        pool.auto_scale_since = now;
        at(now + kAllocateTime, [this, key] { reconcile(key); });
    }
    return now >= *pool.auto_scale_since + kAllocateTime;
}

// Nodes wanted are allocated kAllocateTime after the pool first wanted them (meanwhile it is
// `resizing`, and a stop resize leaves them unallocated, as the service's recordings show).
bool PoolNodes::allocation_due(const Key& key, Pool& pool) {
    const time::TimePoint now = clock_.now();
    if (!pool.wanting_since) {
        pool.wanting_since = now;
        at(now + kAllocateTime, [this, key] { reconcile(key); });
    }
    if (now < *pool.wanting_since + kAllocateTime) return false;
    pool.wanting_since.reset();
    return true;
}

void PoolNodes::reconcile(const Key& key) {
    std::optional<StoredEntity> stored = store_.get(key.first, kPools, key.second);
    Pool& pool = state_[key];
    pool.account = key.first;
    if (stored) pool.id = stored->body.value("id", key.second);
    const bool auto_scale = stored && stored->body.value("enableAutoScale", false) && stored->body.value("state", "") == "active";
    if (!auto_scale) pool.auto_scale_since.reset();
    if (auto_scale && formula_due(key, pool)) {
        evaluate(pool, *stored);
        arm_autoscale(key);
        stored = store_.get(key.first, kPools, key.second);
    }
    if (!stored && !pool.deleting) {  // tasks of a job whose pool does not exist (yet) wait for it
        publish(key);
        return;
    }
    const bool deleting = pool.deleting || !stored || stored->body.value("state", "") == "deleting";
    // A stopped resize: the nodes stay as they are until the next resize or formula.
    const bool stopped = !deleting && stored->body.value("_resizeStopped", false);
    // Whether an allocation is under way (either kind short of its target, or a pool added or
    // resized, "_allocating", that has not had its allocation time yet), and if so whether its new
    // nodes join now.
    bool short_of_nodes = !deleting && !stopped && stored->body.value("_allocating", false);
    for (bool dedicated : {true, false}) {
        if (stopped || deleting) break;
        int count = 0;
        for (auto& node : pool.nodes) count += node->dedicated == dedicated && node->then != Node::Then::leave ? 1 : 0;
        short_of_nodes |= count < stored->body.value(dedicated ? "targetDedicatedNodes" : "targetLowPriorityNodes", 0);
    }
    const bool join_now = short_of_nodes && allocation_due(key, pool);
    if (join_now && stored->body.value("_allocating", false)) {
        store_.update(key.first, kPools, key.second, [](json& doc) { return doc.erase("_allocating") > 0; });
    }
    for (bool dedicated : {true, false}) {
        if (stopped) break;
        int target = deleting ? 0 : stored->body.value(dedicated ? "targetDedicatedNodes" : "targetLowPriorityNodes", 0);
        int count = 0;  // those leaving count no more
        for (auto& node : pool.nodes) count += node->dedicated == dedicated && node->then != Node::Then::leave ? 1 : 0;
        if (join_now) {
            for (; count < target; ++count) add_node(pool, stored->body, dedicated);
        }
        // Nodes without tasks leave first (newest first); nodes running tasks only when the
        // deallocation option lets their tasks go (requeue, terminate); else they are
        // `leavingpool` until their tasks are done (taskcompletion, retaineddata).
        const std::string option = deleting ? "requeue" : stored->body.value("_deallocation", "requeue");
        const bool stop_tasks = option == "requeue" || option == "terminate";
        for (bool running : {false, true}) {
            for (size_t i = pool.nodes.size(); count > target && i-- > 0;) {
                Node& node = *pool.nodes[i];
                if (node.dedicated != dedicated || node.then == Node::Then::leave || (node.running_tasks > 0) != running) continue;
                --count;
                if (!running || stop_tasks) {
                    remove_node(pool, i, option == "terminate" ? "terminate" : "requeue");
                } else {
                    node.then = Node::Then::leave;
                    node.state = "leavingpool";
                    node.state_time = time::now_iso8601();
                }
            }
        }
    }
    if (!short_of_nodes) pool.wanting_since.reset();
    if (deleting) {
        // Gone once the tasks its nodes stopped are back in their queues (task_done reconciles
        // then): a client that finds the pool gone finds them requeued.
        if (!pool.stopping.empty()) {
            publish(key);
            return;
        }
        if (stored) store_.remove(key.first, kPools, key.second);
        if (!pool.queue.empty()) {  // tasks that wait for a pool of this id to come again
            pool.deleting = false;
            publish(key);
            return;
        }
        state_.erase(key);
        std::lock_guard guard(snapshot_mutex_);
        snapshot_.erase(key);
        roots_.erase(key);
        return;
    }
    // The nodes are listed before the pool says it has them: a client that sees it steady finds
    // its nodes (published again below, with what scheduling gave them).
    publish(key);
    write_pool(pool);
    schedule(key);
    publish(key);
}

// The emulator evaluates the formula on the pool's evaluation interval, as the service does, and
// also whenever what it reads changes (a pool added or changed, a task added or ended, a node
// joining or leaving), so that a pool follows its tasks without waiting minutes.
AutoScaleInputs PoolNodes::metrics_of(const Pool& pool, const StoredEntity& stored) const {
    AutoScaleInputs in = metrics_at(0);
    in.lenient_samples = false;
    in.sample_period = static_cast<double>(kSamplePeriod.count());
    in.history = &pool.samples;
    in.now = seconds_of(clock_.now());
    int running = 0, dedicated = 0, low_priority = 0;
    for (const auto& node : pool.nodes) {
        running += node->running_tasks;
        (node->dedicated ? dedicated : low_priority)++;
    }
    const double active = static_cast<double>(pool.queue.size());
    in.metrics["$PendingTasks"] = active + running;
    in.metrics["$ActiveTasks"] = active;
    in.metrics["$RunningTasks"] = running;
    in.metrics["$CurrentDedicatedNodes"] = dedicated;
    in.metrics["$CurrentLowPriorityNodes"] = low_priority;
    in.metrics["$UsableNodeCount"] = dedicated + low_priority;
    in.metrics["$SampleNodeCount"] = dedicated + low_priority;
    in.metrics["$TargetDedicatedNodes"] = stored.body.value("targetDedicatedNodes", 0);
    in.metrics["$TargetLowPriorityNodes"] = stored.body.value("targetLowPriorityNodes", 0);
    return in;
}

void PoolNodes::arm_autoscale(const Key& key) {
    Pool& pool = state_[key];
    if (!pool.sampling) {
        pool.sampling = true;
        at(clock_.now() + kSamplePeriod, [this, key] { take_sample(key); });
    }
    if (!pool.evaluating) {
        std::optional<StoredEntity> stored = store_.get(key.first, kPools, key.second);
        if (!stored) return;
        pool.evaluating = true;
        at(clock_.now() + evaluation_interval_of(stored->body), [this, key] { evaluation_due(key); });
    }
}

void PoolNodes::take_sample(const Key& key) {
    auto it = state_.find(key);
    if (it == state_.end()) return;
    Pool& pool = it->second;
    std::optional<StoredEntity> stored = store_.get(key.first, kPools, key.second);
    if (!stored || !stored->body.value("enableAutoScale", false)) {
        pool.sampling = false;
        pool.samples.clear();
        return;
    }
    pool.samples.push_front({seconds_of(clock_.now()), metrics_of(pool, *stored).metrics});
    constexpr size_t kDayOfSamples = 24 * 3600 / kSamplePeriod.count();
    if (pool.samples.size() > kDayOfSamples) pool.samples.pop_back();
    at(clock_.now() + kSamplePeriod, [this, key] { take_sample(key); });
}

void PoolNodes::evaluation_due(const Key& key) {
    auto it = state_.find(key);
    if (it == state_.end()) return;
    it->second.evaluating = false;
    std::optional<StoredEntity> stored = store_.get(key.first, kPools, key.second);
    if (!stored || !stored->body.value("enableAutoScale", false)) return;
    reconcile(key);  // evaluates, and sets the next evaluation
}

void PoolNodes::evaluate(Pool& pool, const StoredEntity& stored) {
    AutoScaleInputs in = metrics_of(pool, stored);
    AutoScaleResult r = evaluate_autoscale(stored.body.value("autoScaleFormula", ""), in);
    const std::string now = time::now_iso8601();
    store_.update(pool.account, kPools, pool.id, [&](json& doc) {
        json run{{"timestamp", now}};
        if (r.error) {
            run["error"] = {{"code", "AutoScalingFormulaEvaluationError"}, {"message", *r.error}};
        } else {
            run["results"] = r.results;
            doc["_deallocation"] = r.deallocation;
            doc.erase("_resizeStopped");
            doc.erase("resizeErrors");
            const int dedicated = r.target_dedicated.value_or(doc.value("targetDedicatedNodes", 0));
            const int low_priority = r.target_low_priority.value_or(doc.value("targetLowPriorityNodes", 0));
            if (dedicated != doc.value("targetDedicatedNodes", 0) || low_priority != doc.value("targetLowPriorityNodes", 0)) {
                trace("batch pool " + pool.id, "the formula sets targets " + std::to_string(dedicated) + " dedicated, " +
                                                   std::to_string(low_priority) + " low-priority");
            }
            doc["targetDedicatedNodes"] = dedicated;
            doc["targetLowPriorityNodes"] = low_priority;
        }
        doc["autoScaleRun"] = run;
        return true;
    });
}

// What every process of the node sees (the start task and tasks add their own).
engine::Environment PoolNodes::node_environment(const Pool& pool, const Node& node) const {
    engine::Environment env = engine::node_base_environment(node.root);
    env["TMPDIR"] = node.image.view(node.root, node.root / "tmp");
    env["AZ_BATCH_ACCOUNT_NAME"] = pool.account;
    env["AZ_BATCH_POOL_ID"] = pool.id;
    env["AZ_BATCH_NODE_ID"] = node.id;
    env["AZ_BATCH_NODE_IS_DEDICATED"] = node.dedicated ? "true" : "false";
    env["AZ_BATCH_NODE_ROOT_DIR"] = node.image.view(node.root, node.root);
    env["AZ_BATCH_NODE_SHARED_DIR"] = node.image.view(node.root, node.root / "shared");
    env["AZ_BATCH_NODE_STARTUP_DIR"] = node.image.view(node.root, node.root / "startup");
    if (gpus_) {
        // The node sees its own GPUs only, as a VM of its size would: by UUID on the host, from 0
        // in a sandbox whose /dev has none other.
        std::string visible, uuids;
        for (size_t i = 0; i < node.gpus.size(); ++i) {
            visible += (i ? "," : "") + (node.image.sandboxed() ? std::to_string(i) : node.gpus[i]);
            uuids += (i ? "," : "") + node.gpus[i];
        }
        env["CUDA_VISIBLE_DEVICES"] = visible;
        env["NVIDIA_VISIBLE_DEVICES"] = uuids.empty() ? "none" : uuids;
        env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
    }
    return env;
}

// A host name has at most 63 characters: "tvmps-", the id's first 12 hex digits, "-d" or "-p".
std::string PoolNodes::hostname_of(const Node& node) { return "tvmps-" + node.id.substr(6, 12) + "-" + node.id.back(); }

std::vector<std::string> PoolNodes::gpu_devices(const Node& node, std::vector<std::string>* uuids) const {
    std::vector<std::string> devices;
    for (const std::string& uuid : node.gpus) {
        std::optional<engine::Gpu> gpu = gpus_ ? gpus_->find(uuid) : std::nullopt;
        if (!gpu || gpu->minor < 0) continue;  // a fake GPU has no device
        devices.push_back("/dev/nvidia" + std::to_string(gpu->minor));
        if (uuids) uuids->push_back(uuid);
    }
    if (!devices.empty()) {
        for (const char* control : {"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia-modeset"}) {
            devices.push_back(control);
        }
    }
    return devices;
}

Wrap PoolNodes::wrap_for(const Node& node) const {
    const std::string hostname = hostname_of(node);
    const std::vector<std::string> devices = gpu_devices(node);
    return [image = node.image, root = node.root, hostname, devices](const fs::path& cwd, std::vector<std::string> argv) {
        return image.wrap(root, hostname, devices, cwd, std::move(argv));
    };
}

std::optional<NodeContainers> PoolNodes::containers_for(const json& pool_doc, const Node& node) {
    const json configuration = text::value_at(pool_doc, "/virtualMachineConfiguration/containerConfiguration"_json_pointer, json());
    if (!configuration.is_object()) return std::nullopt;
    NodeContainers containers;
    containers.runtimes = &runtimes_;
    containers.options = container_options_;
    containers.registries = configuration.value("containerRegistries", json::array());
    containers.node_id = node.id;
    containers.node_root = node.root;
    containers.root_view = node.image.view(node.root, node.root);
    containers.hostname = hostname_of(node);
    containers.devices = gpu_devices(node, &containers.gpus);
    containers.scratch = root_ / ".containers" / node.id;
    return containers;
}

void PoolNodes::add_node(Pool& pool, const json& doc, bool dedicated) {
    auto node = std::make_unique<Node>();
    node->number = next_numbers_[{pool.account, text::lower(pool.id)}]++;
    node->account = pool.account;
    node->pool_id = pool.id;
    node->vm_size = doc.value("vmSize", "");
    node->joined = clock_.now();
    node->id = node_id(pool.account, text::lower(pool.id), node->number, dedicated);
    node->dedicated = dedicated;
    node->allocation_time = time::now_iso8601();
    node->state_time = node->allocation_time;
    node->address = address_of(next_address_++);
    node->root = root_ / pool.account / text::lower(pool.id) / node->id;
    node->control = std::make_shared<engine::RunControl>();
    std::string note;
    node->image = image_of_pool(doc, images_, bwrap_, note);
    if (gpus_) {
        std::optional<validation::VmSize> size = validation::find_vm_size(doc.value("vmSize", ""));
        node->gpus = gpus_->take(size ? size->gpus : 0);
        if (size && static_cast<int>(node->gpus.size()) < size->gpus) {
            note += "; " + std::to_string(node->gpus.size()) + " of the " + std::to_string(size->gpus) + " GPU(s) of " +
                    std::string(size->name) + " (no more free on this machine)";
        }
    }
    std::error_code ec;
    make_node_directories(node->root);
    // Its VM is made (`creating`), it boots (`starting`), then runs its start task.
    node->state = "creating";
    const Key key{pool.account, text::lower(pool.id)};
    at(clock_.now() + kCreateTime, [this, key, id = node->id] {
        Node* made = find_node(key, id);
        if (!made || made->state != "creating") return;
        made->state = "starting";
        made->state_time = time::now_iso8601();
        at(clock_.now() + kBootTime, [this, key, id] { node_booted(key, id); });
        publish(key);
    });
    log::info("batch pool " + pool.id + ": node " + node->id + ": " + note);
    trace("batch pool " + pool.id, "node " + node->id + " joins");
    log::info("batch pool " + pool.id + ": node " + node->id + " joins (" + node->state + ")");
    pool.nodes.push_back(std::move(node));
}

void PoolNodes::make_node_directories(const fs::path& root) {
    std::error_code ec;
    // The service's (applications, fsmounts, shared, startup, volatile, workitems) and the node's
    // TMPDIR.
    for (const char* dir : {"applications", "fsmounts", "shared", "startup", "volatile/startup", "workitems", "tmp"}) {
        fs::create_directories(root / dir, ec);
    }
}

// The pool's container images are pulled (containerConfiguration's containerImageNames), then
// the start task runs (and its retries), on a thread of their own, which posts its end to
// start_task_done; with waitForSuccess the node takes no task until it has succeeded. The node
// stays `starting` while its images are pulled; one that cannot be pulled makes it unusable.
void PoolNodes::launch_start_task(Pool& pool, Node& node, const json& doc) {
    const json task = doc.value("startTask", json());
    std::optional<NodeContainers> containers = containers_for(doc, node);
    const json configuration = text::value_at(doc, "/virtualMachineConfiguration/containerConfiguration"_json_pointer, json());
    const bool prefetch = containers && !configuration.value("containerImageNames", json::array()).empty();
    if (!task.is_object() && !prefetch) {
        node.state = "idle";
        node.state_time = time::now_iso8601();
        return;
    }
    if (prefetch && node.state != "starting") {  // rebooted or reimaged: it pulls again (what it has is kept)
        node.state = "starting";
        node.state_time = time::now_iso8601();
    }
    engine::Environment env;
    bool wait = true;
    if (task.is_object()) {
        std::error_code ec;
        fs::create_directories(node.root / "startup" / "wd", ec);
        install_certificates(store_, pool.account, doc, node.root / "startup" / "certs", "starttask");
        env = node_environment(pool, node);
        // The pool's application packages are on the node before its start task runs.
        packages_.install(pool.account, doc.value("applicationPackageReferences", json::array()), node.root, env,
                          [&node](const fs::path& p) { return node.image.view(node.root, p); });
        env["AZ_BATCH_CERTIFICATES_DIR"] = node.image.view(node.root, node.root / "startup" / "certs");
        env["AZ_BATCH_TASK_WORKING_DIR"] = node.image.view(node.root, node.root / "startup" / "wd");
        env["AZ_BATCH_TASK_DIR"] = node.image.view(node.root, node.root / "startup");
        wait = task.value("waitForSuccess", true);
        if (!prefetch) {
            node.state = wait ? "waitingforstarttask" : "idle";
            node.state_time = time::now_iso8601();
            node.start_task_info = {{"state", "running"}, {"startTime", time::now_iso8601()}, {"retryCount", 0}};
        }
    }
    Key key{pool.account, text::lower(pool.id)};
    node.start_task = std::thread([this, key, id = node.id, task, env, root = node.root, control = node.control, wait, prefetch,
                                   configuration, containers, wrap = wrap_for(node), turn = engine::Participation(clock_)]() mutable {
        turn.begin();
        if (prefetch) {
            std::optional<json> error;
            try {
                error = prefetch_images(configuration, *containers, *control);
            } catch (const std::exception& e) {
                error = json{{"code", "ContainerMiscError"}, {"message", std::string("The emulator could not pull the node's images: ") + e.what()}};
            }
            if (error || control->cancelled() || !task.is_object()) {
                post([this, key, id, error = error.value_or(json())] { start_task_done(key, id, nullptr, error.is_null(), error); });
                return;
            }
            post([this, key, id, wait] { start_task_begins(key, id, wait); });
        }
        NodeTaskRun run;
        try {
            run = run_node_task(task, env, root / "startup", *control, wrap, containers ? &*containers : nullptr);
        } catch (const std::exception& e) {  // nothing of a start task may take the daemon down
            run.info = {{"state", "completed"}, {"retryCount", 0}, {"result", "failure"},
                        {"failureInfo", failure_info("StartTaskRunFailed", std::string("The emulator could not run the start task: ") + e.what(),
                                                     "ServerError")}};
        }
        // Cancelled (the node left or reboots) it reports too: its removal or reboot goes on there.
        post([this, key, id, info = run.info, ok = run.succeeded || !wait] { start_task_done(key, id, info, ok); });
    });
}

// Its images are on the node: it shows its start task running.
void PoolNodes::start_task_begins(const Key& key, const std::string& node_id, bool wait) {
    Node* node = find_node(key, node_id);
    if (!node || node->state != "starting") return;
    node->state = wait ? "waitingforstarttask" : "idle";
    node->state_time = time::now_iso8601();
    node->start_task_info = {{"state", "running"}, {"startTime", time::now_iso8601()}, {"retryCount", 0}};
    if (auto it = state_.find(key); it != state_.end()) {
        trace("batch pool " + it->second.id, "node " + node_id + " pulled its container images (" + node->state + ")");
        write_pool(it->second);
    }
    schedule(key);
    publish(key);
}

void PoolNodes::node_booted(const Key& key, const std::string& node_id) {
    Node* node = find_node(key, node_id);
    std::optional<StoredEntity> stored = store_.get(key.first, kPools, key.second);
    // Not while its start thread runs (a reboot's pull of its images, which also shows starting).
    if (!node || node->state != "starting" || !stored || node->start_task.joinable()) return;
    launch_start_task(state_[key], *node, stored->body);
    trace("batch pool " + state_[key].id, "node " + node_id + " booted (" + node->state + ")");
    reconcile(key);
}

void PoolNodes::remove_node(Pool& pool, const Node& node, const std::string& task_reason) {
    for (size_t i = 0; i < pool.nodes.size(); ++i) {
        if (pool.nodes[i].get() == &node) return remove_node(pool, i, task_reason);
    }
}

void PoolNodes::remove_node(Pool& pool, size_t index, const std::string& task_reason) {
    std::unique_ptr<Node> node = std::move(pool.nodes[index]);
    pool.nodes.erase(pool.nodes.begin() + static_cast<long>(index));
    cancel_node(*node, "the node leaves the pool");
    log::info("batch pool " + pool.id + ": node " + node->id + " leaves");
    trace("batch pool " + pool.id, "node " + node->id + " leaves");
    // Its tasks go back to the queue (requeueCount, not retryCount), as the service requeues
    // them, unless they are terminated.
    for (const auto& [run_key, run] : running_) {
        if (run.on(node->id)) pool.stopping.insert(run_key);
    }
    stop_node_tasks(*node, task_reason);
    if (node->start_task.joinable()) {
        // It may not have begun (on a virtual clock it needs a turn this thread holds): it reports
        // to start_task_done, which ends the removal.
        leaving_.push_back(std::move(node));
        return;
    }
    forget_node(*node);
}

void PoolNodes::forget_node(Node& node) {
    update_usage(node.account, [&](json& record) {
        record_session(record, {node.pool_id, node.vm_size, node.dedicated, node.joined, clock_.now()});
    });
    if (gpus_) gpus_->give_back(node.gpus);
    std::error_code ec;
    engine::remove_tree(node.root, ec);
}

void PoolNodes::start_task_done(const Key& key, const std::string& node_id, json info, bool succeeded, json error) {
    for (auto left = leaving_.begin(); left != leaving_.end(); ++left) {
        if ((*left)->id != node_id) continue;
        (*left)->start_task.join();  // it has posted this and left the clock's turns
        forget_node(**left);
        leaving_.erase(left);
        return;
    }
    auto it = state_.find(key);
    if (it == state_.end()) return;
    for (auto& node : it->second.nodes) {
        if (node->id != node_id) continue;
        if (node->start_task.joinable()) node->start_task.join();
        if (node->state == "rebooting" || node->state == "reimaging") return finish_reboot(key, node_id);
        if (node->state == "preempted") return;  // its start task was killed with it
        if (!error.is_null()) {
            node->errors = json::array({error});
            node->state = "unusable";
            node->state_time = time::now_iso8601();
            trace("batch pool " + it->second.id, "node " + node_id + " is unusable (" + error.value("code", "") + ")");
            write_pool(it->second);
            schedule(key);
            publish(key);
            return;
        }
        if (!info.is_null()) node->start_task_info = std::move(info);
        if (node->state == "waitingforstarttask" || node->state == "starting" || !succeeded) {
            node->state = succeeded ? "idle" : "starttaskfailed";
            node->state_time = time::now_iso8601();
            trace("batch pool " + it->second.id, "node " + node_id + " is " + node->state);
        }
        write_pool(it->second);
        schedule(key);
        publish(key);
        return;
    }
}

void PoolNodes::write_pool(const Pool& pool) {
    int dedicated = 0, low_priority = 0;
    for (const auto& node : pool.nodes) (node->dedicated ? dedicated : low_priority)++;
    store_.update(pool.account, kPools, pool.id, [&](json& doc) {
        // Reached once the nodes are there and the allocation's time is over (allocation_due).
        const bool reached = dedicated == doc.value("targetDedicatedNodes", 0) &&
                             low_priority == doc.value("targetLowPriorityNodes", 0) && !pool.wanting_since;
        const bool stopped = doc.value("_resizeStopped", false);
        const std::string allocation = reached || stopped ? "steady" : "resizing";
        if (stopped && !reached && !doc.contains("resizeErrors")) {
            const bool short_of_dedicated = dedicated != doc.value("targetDedicatedNodes", 0);
            doc["resizeErrors"] = json::array({{{"code", "ResizeStopped"},
                                                {"message", std::string("Desired number of ") +
                                                                (short_of_dedicated ? "dedicated" : "low priority") +
                                                                " nodes could not be allocated due to a stop resize operation"}}});
            doc["currentDedicatedNodes"] = dedicated;
            doc["currentLowPriorityNodes"] = low_priority;
            doc["allocationState"] = allocation;
            doc["allocationStateTransitionTime"] = time::now_iso8601();
            return true;
        }
        if (doc.value("currentDedicatedNodes", -1) == dedicated && doc.value("currentLowPriorityNodes", -1) == low_priority &&
            doc.value("allocationState", "") == allocation) {
            return false;
        }
        doc["currentDedicatedNodes"] = dedicated;
        doc["currentLowPriorityNodes"] = low_priority;
        if (doc.value("allocationState", "") != allocation) {
            doc["allocationState"] = allocation;
            doc["allocationStateTransitionTime"] = time::now_iso8601();
        }
        return true;
    });
}

void PoolNodes::publish(const Key& key) {
    auto it = state_.find(key);
    json nodes = json::array();
    std::map<std::string, fs::path> roots;
    if (it != state_.end()) {
        std::optional<StoredEntity> stored = store_.get(key.first, kPools, key.second);
        const std::string vm_size = stored ? stored->body.value("vmSize", "") : "";
        const json certificates = stored ? stored->body.value("certificateReferences", json::array()) : json::array();
        const json pool_doc = stored ? stored->body : json::object();
        for (const auto& node : it->second.nodes) {
            json n{{"id", node->id},
                   {"state", node->state},
                   {"schedulingState", node->scheduling ? "enabled" : "disabled"},
                   {"stateTransitionTime", node->state_time},
                   {"allocationTime", node->allocation_time},
                   {"ipAddress", node->address},
                   {"affinityId", "TVM:" + node->id},
                   {"vmSize", vm_size},
                   {"totalTasksRun", node->total_tasks_run},
                   {"runningTasksCount", node->running_tasks},
                   {"runningTaskSlotsCount", node->running_tasks},
                   {"totalTasksSucceeded", node->total_tasks_succeeded},
                   {"isDedicated", node->dedicated},
                   {"endpointConfiguration", node_endpoints(pool_doc, node->number)}};
            // What a node shows once it has booted (the service's answers have none of it before).
            if (node->state != "creating" && node->state != "starting") {
                n["lastBootTime"] = node->allocation_time;  // a reboot is quick enough here not to show
                n["certificateReferences"] = certificates;
                n["nodeAgentInfo"] = {{"version", "1.9.27"}, {"lastUpdateTime", node->allocation_time}};
            }
            if (!node->start_task_info.is_null()) n["startTaskInfo"] = node->start_task_info;
            if (!node->errors.is_null()) n["errors"] = node->errors;
            nodes.push_back(std::move(n));
            roots[node->id] = node->root;
        }
    }
    std::lock_guard guard(snapshot_mutex_);
    snapshot_[key] = std::move(nodes);
    roots_[key] = std::move(roots);
}

void PoolNodes::update_usage(const std::string& account, const std::function<void(json&)>& change) {
    const auto apply = [&](json& record) {
        change(record);
        return true;
    };
    if (store_.update(account, kUsage, kUsage, apply)) return;
    store_.add(account, kUsage, new_usage_record(clock_.now()));  // the account's first
    store_.update(account, kUsage, kUsage, apply);
}

json PoolNodes::usage_record(const std::string& account) {
    store_.add(account, kUsage, new_usage_record(clock_.now()));  // nothing when there is one
    std::optional<StoredEntity> record = store_.get(account, kUsage, kUsage);
    return record ? record->body : new_usage_record(clock_.now());
}

std::vector<NodeSession> PoolNodes::node_sessions(const std::string& account) {
    std::vector<NodeSession> sessions = sessions_of(usage_record(account));
    std::vector<NodeSession> live = ask<std::vector<NodeSession>>([this, account] {
        std::vector<NodeSession> out;
        for (const auto& [key, pool] : state_) {
            if (key.first != account) continue;
            for (const auto& node : pool.nodes) out.push_back({pool.id, node->vm_size, node->dedicated, node->joined, clock_.now()});
        }
        return out;
    });
    sessions.insert(sessions.end(), live.begin(), live.end());
    return sessions;
}

AutoScaleResult PoolNodes::try_formula(const std::string& account, const std::string& pool_id, const std::string& formula) {
    Key key{account, text::lower(pool_id)};
    return ask<AutoScaleResult>([this, key, formula] {
        std::optional<StoredEntity> stored = store_.get(key.first, kPools, key.second);
        Pool empty;
        auto it = state_.find(key);
        const Pool& pool = it == state_.end() ? empty : it->second;
        return evaluate_autoscale(formula, stored ? metrics_of(pool, *stored) : metrics_at(0));
    });
}

json PoolNodes::nodes(const std::string& account, const std::string& pool_id) const {
    std::lock_guard guard(snapshot_mutex_);
    auto it = snapshot_.find({account, text::lower(pool_id)});
    return it == snapshot_.end() ? json::array() : it->second;
}

std::optional<fs::path> PoolNodes::node_root(const std::string& account, const std::string& pool_id,
                                             const std::string& node_id) const {
    std::lock_guard guard(snapshot_mutex_);
    auto it = roots_.find({account, text::lower(pool_id)});
    if (it == roots_.end()) return std::nullopt;
    auto node = it->second.find(node_id);
    if (node == it->second.end()) return std::nullopt;
    return node->second;
}

}  // namespace bai::batch
