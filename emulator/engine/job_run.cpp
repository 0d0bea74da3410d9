#include "emulator/engine/job_run.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <thread>

#include "common/crypto/random_id.h"
#include "common/text/json_value_at.h"
#include "common/time/timestamps.h"
#include "emulator/arm/mount_volumes.h"
#include "emulator/engine/diagnosis_archive.h"
#include "emulator/engine/docker_client.h"
#include "emulator/engine/image_pull.h"
#include "emulator/engine/job_environment.h"
#include "emulator/engine/launch_plan.h"
#include "emulator/engine/make_directories.h"
#include "emulator/engine/node_gateway.h"
#include "emulator/engine/node_setup.h"
#include "emulator/engine/host_volumes.h"
#include "emulator/engine/node_view.h"
#include "emulator/engine/sandbox.h"
#include "emulator/engine/volume_links.h"
#include "emulator/engine/writable_root.h"
#include "fuse_mounts/manager/mount_table.h"

namespace bai::engine {

namespace fs = std::filesystem;
using nlohmann::json;
using Result = JobOutcome::Result;

namespace {

// The job's execution log: one file, or one per node (master first) for a job on several nodes,
// as the service wrote them (execution-<nodeId>.log, recorded). Every node's file has the job's
// lines; a node's own lines (its processes) go to its file and the master's.
class ExecutionLog {
public:
    void open(const std::vector<fs::path>& paths) {
        for (const fs::path& path : paths) outs_.push_back(std::make_unique<std::ofstream>(path, std::ios::app));
    }
    void close() { outs_.clear(); }
    void line(const std::string& text) {
        for (size_t i = 0; i < outs_.size(); ++i) write(i, text);
    }
    void node_line(size_t node, const std::string& text) {
        write(0, text);
        if (node != 0) write(node, text);
    }

private:
    void write(size_t i, const std::string& text) {
        if (i >= outs_.size() || !*outs_[i]) return;
        *outs_[i] << time::format_iso8601(time::now(), 3) << " " << text << "\n";
        outs_[i]->flush();
    }
    std::vector<std::unique_ptr<std::ofstream>> outs_;
};

void write_file(const fs::path& path, const std::string& text, fs::perms perms = fs::perms::owner_read | fs::perms::owner_write) {
    std::ofstream out(path, std::ios::trunc);
    out << text;
    out.close();
    if (!out) throw std::runtime_error("cannot write " + path.string());
    std::error_code ec;
    fs::permissions(path, perms, ec);
}

// On one node: the job's directory wiped and made again, with its volumes and the directory shared
// by the job's nodes: links on the host, empty directories a container binds them onto.
fs::path prepare_node_directory(const JobNode& node, const JobRunInputs& in, const std::vector<arm::Volume>& volumes,
                                const StorageAccess& storage, bool links, std::vector<std::string>& notes,
                                AttachedVolumes& attached) {
    fs::path dir = node.root / "jobs" / in.job_name;
    std::error_code ec;
    remove_tree(dir, ec);  // never into a share a previous run left mounted there
    make_directories_below(node.root, dir / "mounts", ec);
    if (!ec) fs::create_directories(node.root / "mounts", ec);
    if (ec) throw std::runtime_error("cannot create " + dir.string() + ": " + ec.message());
    if (links) {
        fs::create_directory_symlink(in.shared_dir, dir / "shared", ec);
    } else {
        fs::create_directory(dir / "shared", ec);
    }
    if (ec) throw std::runtime_error("cannot make " + (dir / "shared").string() + ": " + ec.message());
    attach_volumes(dir / "mounts", volumes, storage, notes, attached, links);
    return dir;
}

std::string describe(const JobNode& node) { return node.id + " (" + node.address + ")"; }

class Runner {
public:
    Runner(const JobRunInputs& in, const StorageAccess& storage, RunControl& control)
        : in_(in), storage_(storage), files_(storage.files), control_(control) {}

    JobOutcome run() {
        try {
            set_up();
        } catch (const std::exception& e) {
            log_.line(std::string("the job cannot start: ") + e.what());
            return finish({Result::failed, std::nullopt, "JobPreparationFailed", e.what()});
        }
        if (runtime_.kind == RuntimeKind::docker) {
            if (std::optional<JobOutcome> stopped = prepare_containers()) return finish(*stopped);
        }
        if (!plan_.preparation.empty()) {
            log_.line("job preparation on " + std::to_string(plan_.preparation.size()) + " node(s)");
            JobOutcome prep = run_processes(plan_.preparation);
            if (prep.result == Result::failed) {
                if (std::optional<JobOutcome> stopped = host_lost(prep.exit_code)) return finish(*stopped);
            }
            if (prep.result != Result::succeeded) {
                if (prep.result == Result::failed) {
                    prep.error_code = "JobPreparationFailed";
                    prep.error_message = "The job preparation task failed with exit code " + std::to_string(*prep.exit_code);
                }
                return finish(prep);
            }
        }
        std::optional<JobOutcome> played = play_declared_workload();
        JobOutcome outcome = played ? *played : run_processes(plan_.processes);
        // (srun exits 0 when its step's host fails under it: a success is checked too.)
        if (outcome.result != Result::cancelled) {
            if (std::optional<JobOutcome> stopped = host_lost(outcome.exit_code)) return finish(*stopped);
        }
        if (outcome.result == Result::failed) {
            outcome.error_code = "JobFailed";
            outcome.error_message = "Job failed with non-zero exit code";
        }
        return finish(outcome);
    }

private:
    bool in_container() const { return runtime_.kind != RuntimeKind::host; }

    // Processes that ended because their node's host was taken away (a Slurm pre-emption kills
    // them before the engine hears of it; srun exits 0, "Node failure", when the host fails): the
    // run is stopped as the engine stops it for that cause, and the job requeued, not ended.
    std::optional<JobOutcome> host_lost(std::optional<int> exit_code) {
        if (!in_.nodes[0].hosts) return std::nullopt;
        // A failure may be the host system taking the host away this moment (Slurm signals the
        // steps before it says the job was pre-empted; srun exits when the controller calls the
        // host down, a moment before squeue says so): asked again for a while. A success is asked
        // once.
        const bool failed = exit_code && *exit_code != 0;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(failed ? 5 : 0);
        while (true) {
            if (std::optional<JobOutcome> stopped = host_lost_now()) return stopped;
            if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
            std::this_thread::sleep_for(std::chrono::milliseconds(250));
        }
    }

    std::optional<JobOutcome> host_lost_now() {
        for (const JobNode& node : in_.nodes) {
            if (!node.hosts) continue;
            std::optional<HostLoss> loss = node.hosts->lost(node.id);
            if (!loss) continue;
            const char* reason = *loss == HostLoss::preempted ? "preempted" : *loss == HostLoss::failed ? "node failed" : "requeue";
            log_.line(std::string("the host of node ") + node.id + " was taken away (" + reason + ")");
            control_.cancel(reason);
            return JobOutcome{Result::cancelled, std::nullopt, "", ""};
        }
        return std::nullopt;
    }

    // What can run the job's container (set_up asks only for a job with containerSettings): this
    // machine's runtimes, or, on hosts, theirs (the docker engine asked of each node's host; every
    // node's must answer for docker).
    RuntimeAvailability availability() {
        if (!in_.nodes[0].hosts) return in_.runtimes->availability();
        const bool wants_docker = in_.containers->choice == RuntimeChoice::automatic || in_.containers->choice == RuntimeChoice::docker;
        if (!wants_docker) return in_.runtimes->availability();
        RuntimeAvailability available;
        for (size_t i = 0; i < in_.nodes.size(); ++i) {
            available = in_.runtimes->availability_on(in_.nodes[i].address, [this, i](std::string& answer) {
                return ask_host_docker(i, answer);
            });
            if (!available.docker) break;
        }
        return available;
    }

    // `docker version` on node i's host (srun given 30 s: a step Slurm holds back must not hold
    // the job): its engine's version, or why none answers; nullopt, not remembered, when the
    // answer says nothing of the host's engine (the run cancelled, the host taken away).
    std::optional<bool> ask_host_docker(size_t i, std::string& answer) {
        const JobNode& node = in_.nodes[i];
        if (control_.cancelled()) return std::nullopt;
        std::vector<std::string> argv{"timeout", "30"};
        try {
            const std::vector<std::string> prefix = host_prefix(i, "docker-version");
            argv.insert(argv.end(), prefix.begin(), prefix.end());
        } catch (const std::exception& e) {
            answer = e.what();
            return std::nullopt;
        }
        argv.insert(argv.end(), {"timeout", "10", "docker", "version", "--format", "{{.Server.Version}}"});
        CommandOutput asked;
        try {
            std::error_code ec;
            fs::create_directories(node.root / "tmp", ec);
            asked = run_command(argv, docker_environment(), node.root / "tmp");
        } catch (const std::exception& e) {
            answer = e.what();
            return std::nullopt;
        }
        if (const std::string version = last_line(asked.out); asked.status.code == 0 && !version.empty()) {
            answer = version;
            return true;
        }
        if (control_.cancelled() || node.hosts->lost(node.id)) return std::nullopt;
        const std::string said = last_line(asked.err);
        answer = "no docker engine answers" + (said.empty() ? std::string() : " (" + said + ")");
        return false;
    }

    // Made when first needed: a played job names no container or step, and the first random
    // bytes a thread asks for set up a generator of its own (its seed read from the system).
    const std::string& run_tag() const {
        if (run_tag_.empty()) run_tag_ = crypto::random_hex(3);
        return run_tag_;
    }

    // The words that run a command on node i's host as a step of this run named after `what`, in
    // `cwd` there; none for a node of this machine.
    std::vector<std::string> host_prefix(size_t i, const std::string& what, const fs::path& cwd = "/") {
        if (!in_.nodes[i].hosts) return {};
        return in_.nodes[i].hosts->launch_prefix(in_.nodes[i].id, "bai-" + run_tag() + "-" + std::to_string(i) + "-" + what, cwd);
    }

    void set_up() {
        // (A job without containerSettings runs on the host whatever runtimes there are: nothing
        // to ask of docker or bubblewrap for it.)
        if (in_.containers && in_.runtimes && in_.properties.contains("containerSettings")) {
            available_ = availability();
            runtime_ = choose_runtime(in_.properties, *in_.containers, available_);
        } else {
            runtime_ = choose_runtime(in_.properties, {RuntimeChoice::host, {}, false}, {});
        }
        if (runtime_.kind == RuntimeKind::docker) {
            // What docker pulls and runs: the image under its registry's server.
            image_ = image_source(text::value_at(in_.properties, "/containerSettings/imageSourceRegistry"_json_pointer, json::object()));
            runtime_.image = image_.reference;
        }
        job_volume_list_ = arm::volumes_of(in_.properties.value("mountVolumes", json()));
        if (std::string shm = text::value_at(in_.properties, "/containerSettings/shmSize"_json_pointer, ""); !shm.empty()) {
            shm_bytes_ = parse_shm_size(shm);
        }
        std::vector<std::string> notes;
        PlanInputs plan_inputs;
        // In a container the image has its own interpreter, which the machine's PATH cannot tell:
        // `python` where the image has it (the service's images had), else `python3`, found by
        // the shell that runs the command in there.
        plan_inputs.default_python = in_container() ? "$(command -v python || echo python3)" : in_.default_python;
        plan_inputs.mpi_agent = in_.mpi_agent.string();
        plan_inputs.on_hosts = in_.nodes[0].hosts != nullptr;
        std::vector<std::string> hosts;
        for (const JobNode& node : in_.nodes) {
            plan_inputs.nodes.push_back({node.id, node.address, node.slots});
            hosts.push_back(node.address);
        }
        std::error_code ec;
        fs::create_directories(in_.shared_dir, ec);
        for (const JobNode& node : in_.nodes) {
            job_volumes_.push_back(std::make_unique<AttachedVolumes>(in_.mounts));
            // (A host that has a copy of the node's directories of its own gets a directory: the
            // job's shared one is not there.)
            const bool own_copy = node.hosts && !node.hosts->shares_disk();
            const bool links = !in_container() && !own_copy;
            fs::path dir = prepare_node_directory(node, in_, job_volume_list_, storage_, links, notes, *job_volumes_.back());
            dirs_.push_back(dir);
            if (node.hosts) {
                if (std::string why = attach_on_host(*node.hosts, node.id, "bai-job-" + in_.job_name + "-", dir / "mounts", job_volume_list_,
                                                     storage_, dir / "host-mounts", *job_volumes_.back());
                    !why.empty()) {
                    throw std::runtime_error("node " + node.id + ": " + why);
                }
            }
            // (A host with a copy of its own has the job's shared directory in the node's job
            // directory, which goes with the node: not shared between the job's nodes there.)
            NodeDirectories where{node.root, in_.job_name, own_copy ? dir / "shared" : in_.shared_dir, node.volume_directories,
                                  job_volumes_.back()->directories};
            views_.push_back(in_container() ? container_view(where) : host_view(where));
            Environment env = node_base_environment(node.root);
            if (in_container()) env["TMPDIR"] = "/tmp";
            for (auto& [name, value] : job_environment({in_.properties, views_.back().paths, hosts, {node.gpus, in_container()}, in_.preview_layout})) {
                env[name] = value;
            }
            envs_.push_back(std::move(env));
        }
        plan_inputs.launcher_hostfile = (dirs_[0] / "hostfile").string();
        if (in_container()) plan_inputs.rank_directory = views_[0].job_dir;
        plan_inputs.master_through_agent = plan_inputs.on_hosts && runtime_.kind == RuntimeKind::docker;
        plan_ = plan_launch(in_.properties, plan_inputs);

        const Environment& master = envs_[0];
        note_share_directories();
        stdouterr_ = host_path(stdouterr_directory(in_.properties, master, in_.preview_layout), "stdOutErrPathPrefix");
        make_directories_below(dirs_[0], in_store(stdouterr_), ec);  // (the job's temp directory, often)
        if (ec) throw std::runtime_error("cannot create the stdouterr directory " + stdouterr_.string() + ": " + ec.message());
        if (in_.stdouterr_ready) in_.stdouterr_ready(in_store(stdouterr_));
        // The preview's service wrote no execution.log beside the logs: the emulator's goes to the
        // master node's job directory then.
        std::vector<fs::path> logs;
        if (in_.preview_layout) {
            logs.push_back(dirs_[0] / "execution.log");
        } else if (in_.nodes.size() == 1) {
            logs.push_back(in_store(stdouterr_) / "execution.log");
        } else {
            for (const JobNode& node : in_.nodes) logs.push_back(in_store(stdouterr_) / ("execution-" + node.id + ".log"));
        }
        log_.open(logs);
        log_.line("job " + in_.job_id);
        log_.line("runtime: " + runtime_.reason);
        if (!runtime_.error.empty()) throw std::runtime_error(runtime_.error);
        for (size_t i = 0; i < in_.nodes.size(); ++i) {
            log_.node_line(i, "node " + std::to_string(i) + ": " + describe(in_.nodes[i]) + ", GPUs: " +
                      envs_[i].at("NVIDIA_VISIBLE_DEVICES"));
        }
        for (const std::string& note : notes) log_.line("mounted " + note);
        for (const json& secret : in_.properties.value("secrets", json::array())) {
            if (secret.is_object() && !secret.contains("value")) {
                log_.line("secret " + secret.value("name", "") + " is a Key Vault reference, which cannot be read offline: set empty");
            }
        }
        for (const json& output : in_.properties.value("outputDirectories", json::array())) {
            if (!output.is_object()) continue;
            fs::path dir = in_store(host_path(output_directory(in_.properties, output, master),
                                              "outputDirectories " + output.value("id", "")));
            fs::create_directories(dir, ec);
            if (ec) throw std::runtime_error("cannot create the output directory " + dir.string() + ": " + ec.message());
            outputs_.push_back(dir);
        }
        for (size_t i = 0; i < in_.nodes.size(); ++i) {
            write_file(dirs_[i] / "hostfile", plan_.hostfile, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
        }
        if (!played()) open_node_gateway();  // a played job runs no process that would ssh
        if (runtime_.kind == RuntimeKind::sandbox) set_up_sandboxes();
        if (runtime_.kind == RuntimeKind::docker) set_up_containers();
        if (!played()) write_node_scripts();  // a played job runs no process that would use them
        copy_to_hosts();
        log_.line("toolkit " + plan_.tool_type + ": " + std::to_string(plan_.processes.size()) + " process(es)");
    }

    // The scripts through which the MPI agent and ssh enter each node (its container, if any).
    void write_node_scripts() {
        std::error_code ec;
        fs::create_directories(dirs_[0] / "mpi-nodes", ec);
        for (size_t i = 0; i < in_.nodes.size(); ++i) {
            const Environment env = runtime_.kind == RuntimeKind::docker ? merged(docker_environment(), envs_[i]) : envs_[i];
            write_file(dirs_[0] / "mpi-nodes" / in_.nodes[i].address,
                       // (On a host the step starts in the node's job directory: srun --chdir.
                       // The script runs on the master's host, where another node's may not be.)
                       node_script(in_.nodes[i].id, in_.nodes[i].address, in_.nodes[i].hosts ? fs::path() : dirs_[i], env,
                                   wrapper(i, envs_[i])),
                       fs::perms::owner_all);
        }
    }

    // Hosts that do not see the data directory get the job's directory on their node, its hostfile,
    // the MPI agent, the directories its sandbox binds and, on the master's, the scripts through
    // which mpirun enters each node.
    void copy_to_hosts() {
        for (size_t i = 0; i < in_.nodes.size(); ++i) {
            const JobNode& node = in_.nodes[i];
            if (!node.hosts || node.hosts->shares_disk()) continue;
            std::vector<fs::path> copied{dirs_[i], dirs_[i] / "mounts", dirs_[i] / "shared", dirs_[i] / "hostfile"};
            if (in_container()) {  // what on_host_binds made for the container's binds
                const fs::path own = node.root / "sandbox-mounts";
                if (runtime_.kind == RuntimeKind::sandbox) copied.push_back(node.root / "home");
                copied.push_back(own);
                for (const auto& [relative, directory] : node.volume_directories) copied.push_back(own / relative);
            }
            if (i == 0 && !played()) {
                copied.push_back(dirs_[0] / "mpi-nodes");
                for (const JobNode& each : in_.nodes) copied.push_back(dirs_[0] / "mpi-nodes" / each.address);
            }
            if (uses_mpi()) copied.push_back(in_.mpi_agent);  // OpenMPI's daemons check that it is there too
            node.hosts->copy_to_host(node.id, copied);
        }
    }

    // The shares and file servers mounted on the master node and their directories behind the mounts.
    void note_share_directories() {
        share_dirs_ = backing_directories(in_.nodes[0].root / "mounts", in_.cluster_volumes, storage_);
        for (auto& job_level : backing_directories(dirs_[0] / "mounts", job_volume_list_, storage_)) {
            share_dirs_.push_back(std::move(job_level));
        }
    }

    // Where the emulator itself writes a path of the master node: a share's files in the store's
    // directory, not through the node's FUSE mount (a file the emulator kept open on its own mount
    // would hang its exit if it were killed); the index learns of them at the end of the run.
    fs::path in_store(const fs::path& path) const { return in_backing_directory(path, share_dirs_); }

    // Password-less ssh between the job's nodes (node_gateway.h): the gateway, its name, token
    // and the calling node in every node's environment, and the job's `ssh` on its PATH (a link
    // on the host, bound read-only at /usr/local/bin/ssh in a container).
    void open_node_gateway() {
        std::error_code ec;
        if (in_.node_ssh.empty() || !fs::is_regular_file(in_.node_ssh, ec)) return;
        std::vector<NodeGateway::Node> nodes;
        for (const JobNode& node : in_.nodes) nodes.push_back({node.address, node.id, dirs_[0] / "mpi-nodes" / node.address});
        try {
            gateway_ = std::make_unique<NodeGateway>(std::move(nodes), in_container());
        } catch (const std::exception& e) {
            log_.line(std::string("no ssh between the nodes: ") + e.what());
            return;
        }
        for (size_t i = 0; i < in_.nodes.size(); ++i) {
            Environment& env = envs_[i];
            env["BAI_NODE_GATEWAY"] = gateway_->name();
            env["BAI_NODE_GATEWAY_TOKEN"] = gateway_->token();
            env["BAI_NODE_ADDRESS"] = in_.nodes[i].address;
            if (in_container()) {
                views_[i].binds.push_back({in_.node_ssh, "/usr/local/bin/ssh", true});
                continue;
            }
            const fs::path bin = in_.nodes[i].root / "bin";
            fs::create_directories(bin, ec);
            fs::remove(bin / "ssh", ec);
            fs::create_symlink(in_.node_ssh, bin / "ssh", ec);
            if (!ec) env["PATH"] = bin.string().append(":").append(env.count("PATH") ? env["PATH"] : "/usr/bin:/bin");
        }
    }

    bool uses_mpi() const {
        return std::any_of(plan_.processes.begin(), plan_.processes.end(), [](const PlannedProcess& p) { return p.mpi_launcher; });
    }

    // OpenMPI's daemons check that mpirun's plm_rsh_agent exists: in a container it is where
    // mpirun named it.
    SandboxBind agent_bind() const { return {in_.mpi_agent, in_.mpi_agent.string()}; }

    // Where a path the master's processes see lies on this machine (log and output directories,
    // which the emulator makes and lists).
    fs::path host_path(const std::string& path, const std::string& what) {
        std::optional<fs::path> host = views_[0].to_host(path);
        if (!host) {
            throw std::runtime_error("the " + what + " path " + path + " lies on no volume of the container (" +
                                     kServiceRoot + "/mounts or the job's directories)");
        }
        return *host;
    }

    // Each node's sandbox: a writable layer over the image's root (or the host's), the node's
    // /tmp, its GPUs, the job's paths.
    void set_up_sandboxes() {
        fs::path lower = runtime_.root.empty() ? fs::path("/") : runtime_.root;
        std::error_code ec;
        // An overlay over the host's root stops at the mounts under it: the system software
        // mounted there (a GPU driver's libraries at /usr/local/nvidia, say) is bound back.
        const std::vector<std::string> submounts =
            lower == fs::path("/") ? system_submounts(mounts::read_mountinfo()) : std::vector<std::string>{};
        for (size_t i = 0; i < in_.nodes.size(); ++i) {
            const JobNode& node = in_.nodes[i];
            SandboxSpec spec;
            std::string why = "the node's host would not see the overlay that makes it writable (made on this machine)";
            roots_.push_back(node.hosts ? nullptr : WritableRoot::mount(lower, node.root / "containers" / in_.job_name, why));
            spec.root = roots_.back() ? roots_.back()->path() : lower;
            spec.root_writable = roots_.back() != nullptr;
            if (spec.root_writable) spec.host_read_only = submounts;
            if (i == 0 && !roots_.back()) log_.line("the sandboxes' root is read-only: " + why);
            spec.binds.push_back({node.root / "tmp", "/tmp"});
            if (!spec.root_writable) {
                // Without a writable layer, HOME is the node's own directory.
                fs::create_directories(node.root / "home", ec);
                spec.binds.push_back({node.root / "home", envs_[i].count("HOME") ? envs_[i].at("HOME") : "/root"});
            }
            for (const SandboxBind& bind : views_[i].binds) {
                // A read-only root cannot take a new mount point outside /mnt (the job's ssh at
                // /usr/local/bin/ssh): that bind is left out, ssh is then the root's own.
                if (!spec.root_writable && bind.view.rfind("/mnt/", 0) != 0 && !fs::exists(lower / bind.view.substr(1), ec)) {
                    if (i == 0) log_.line(std::string("not in the sandboxes (their root is read-only): ").append(bind.view));
                    continue;
                }
                spec.binds.push_back(bind);
            }
            if (uses_mpi()) spec.binds.push_back(agent_bind());
            on_host_binds(node, spec.binds);
            order_binds(spec.binds);
            spec.dirs.push_back(views_[i].paths.mount_root);
            spec.devices = node.gpu_devices;
            if (!node.gpu_devices.empty()) {
                for (const char* control : {"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia-modeset"}) {
                    spec.devices.push_back(control);
                }
            }
            spec.hostname = node.id;
            spec.shm_bytes = shm_bytes_;
            spec.cwd = views_[i].job_dir;
            sandboxes_.push_back(std::move(spec));
        }
        if (!fs::exists(lower / "bin" / "bash", ec)) shell_ = "/bin/sh";
    }

    // The image pulled and the job's containers started. A failure on a node's host may be the
    // host taken away under the step (the job is then requeued, as when its processes fail so);
    // a node that has lost its host meanwhile fails it.
    std::optional<JobOutcome> prepare_containers() {
        std::optional<JobOutcome> stopped;
        try {
            stopped = pull();
            if (!stopped) stopped = start_containers();
        } catch (const std::exception& e) {
            stopped = JobOutcome{Result::failed, std::nullopt, "JobPreparationFailed", e.what()};
        }
        if (stopped && stopped->result == Result::failed) {
            if (std::optional<JobOutcome> lost = host_lost(1)) return lost;
        }
        return stopped;
    }

    // A container's binds on a node's host. The node's mount root there holds links to its
    // shares' directories (MountSettings::link_shares), which do not resolve inside a container
    // (nor can a bind land on them): the container sees a directory of its own there, each volume
    // bound in it. A host that does not see this machine's disk has no job `ssh` (left out:
    // docker would make a directory where it is missing).
    void on_host_binds(const JobNode& node, std::vector<SandboxBind>& binds) {
        if (!node.hosts) return;
        std::error_code ec;
        const fs::path own = node.root / "sandbox-mounts";
        for (const auto& [relative, directory] : node.volume_directories) fs::create_directories(own / relative, ec);
        for (SandboxBind& bind : binds) {
            if (bind.host == node.root / "mounts") bind.host = own;
        }
        if (!node.hosts->shares_disk()) {
            binds.erase(std::remove_if(binds.begin(), binds.end(), [this](const SandboxBind& b) { return b.host == in_.node_ssh; }),
                        binds.end());
        }
    }

    // Each node's container binds: the job's paths, the MPI agent, as its host sees them.
    void set_up_containers() {
        for (size_t i = 0; i < in_.nodes.size(); ++i) {
            std::vector<SandboxBind> binds = views_[i].binds;
            if (uses_mpi()) binds.push_back(agent_bind());
            on_host_binds(in_.nodes[i], binds);
            order_binds(binds);
            container_binds_.push_back(std::move(binds));
        }
    }

    // The image from its registry before any process (image_pull.h): a failed pull fails the job
    // at its preparation with docker's (the registry's) message. nullopt: go on. On hosts, each
    // host's own engine pulls it (once per host), the credentials' file copied there for the pull
    // where the host does not see this machine's disk.
    std::optional<JobOutcome> pull() {
        const ImageSource& source = image_;
        if (!available_.docker_version.empty()) log_.line("docker engine " + available_.docker_version);
        std::vector<std::string> pulled_on;
        for (size_t i = 0; i < in_.nodes.size(); ++i) {
            const JobNode& node = in_.nodes[i];
            DockerClient client{{in_.runtimes->docker()}, {}, {}};
            if (node.hosts) {
                if (std::find(pulled_on.begin(), pulled_on.end(), node.address) != pulled_on.end()) continue;
                pulled_on.push_back(node.address);
                client.argv = host_prefix(i, "docker-pull");
                client.argv.push_back(docker_client(i));
                if (!node.hosts->shares_disk()) {
                    client.send = [&node](const std::vector<fs::path>& paths) { node.hosts->copy_to_host(node.id, paths); };
                    client.withdraw = [&node](const fs::path& path) { node.hosts->remove_from_host(node.id, path); };
                }
            } else if (i > 0) {
                break;  // one engine for every node of this machine
            }
            const PullResult pulled = pull_image(client, source, dirs_[i] / ".image-pull", control_,
                                                 [this, i](const std::string& line) { log_.node_line(i, line); });
            if (pulled.outcome == PullResult::Outcome::cancelled) return JobOutcome{Result::cancelled, std::nullopt, "", ""};
            if (pulled.outcome != PullResult::Outcome::failed) continue;
            return JobOutcome{Result::failed, std::nullopt, "JobPreparationFailed",
                              "The image " + source.reference + " could not be pulled" + (node.hosts ? " on " + describe(node) : "") + ": " +
                                  pulled.message};
        }
        return std::nullopt;
    }

    // The docker client of node i: this machine's, or the one on the PATH of the node's host.
    std::string docker_client(size_t i) const { return in_.nodes[i].hosts ? "docker" : in_.runtimes->docker(); }

    // The command words that put a process of node `node` into its container; none on the host.
    std::vector<std::string> wrapper(size_t node, const Environment& env) {
        // On a host: a step of its own there; in its sandbox or its container there (bubblewrap
        // on the host over the paths the hosts see, or the host's docker engine).
        std::vector<std::string> prefix = step_prefix(node);
        if (runtime_.kind == RuntimeKind::sandbox) {
            for (std::string& word : sandbox_command(in_.runtimes->bwrap(), sandboxes_[node], {})) prefix.push_back(std::move(word));
        }
        if (runtime_.kind == RuntimeKind::docker) {
            std::vector<std::string> variables;
            for (const auto& [name, value] : env) {
                if (!machine_variable(name)) variables.push_back(name);
            }
            for (std::string& word : docker_exec_command(docker_client(node), container_name(node), views_[node].job_dir, variables)) {
                prefix.push_back(std::move(word));
            }
        }
        return prefix;
    }

    // The words that start a process of node `node` as a step of its own on the node's host, in
    // the node's job directory; none for a node of this machine.
    std::vector<std::string> step_prefix(size_t node) { return host_prefix(node, std::to_string(++steps_), dirs_[node]); }

    // Unique per run: a requeued job's next run may start before this one's containers are gone.
    std::string container_name(size_t node) const {
        return docker_name("bai-" + in_.job_name + "-" + in_.shared_dir.filename().string().substr(0, 8) + "-" + run_tag() + "-" +
                           std::to_string(node));
    }

    // Each node's container (docker_client.h), started before the job's preparation; the job's
    // processes enter it. A container that cannot start fails the job at its preparation with
    // docker's words. nullopt: go on.
    std::optional<JobOutcome> start_containers() {
        for (size_t i = 0; i < in_.nodes.size(); ++i) {
            DockerRun run;
            run.owner = in_.runtimes->owner();
            run.name = container_name(i);
            run.image = runtime_.image;
            run.binds = container_binds_[i];
            if (in_.nodes[i].hosts) {
                if (std::optional<NodeHosts::Placement> where = in_.nodes[i].hosts->placement(in_.nodes[i].id)) run.allocation = where->allocation;
            }
            // Fake GPUs have no devices, and an engine asked for them refuses the container
            // ("could not select device driver"): their UUIDs reach the job in its variables.
            if (!in_.nodes[i].gpu_devices.empty()) run.gpus = in_.nodes[i].gpus;
            run.shm_bytes = shm_bytes_;
            run.cwd = views_[i].job_dir;
            const fs::path output = dirs_[i] / ".container.log";
            std::vector<std::string> argv = host_prefix(i, "docker-run");
            const std::vector<std::string> start_words = docker_start_command(docker_client(i), run);
            argv.insert(argv.end(), start_words.begin(), start_words.end());
            std::shared_ptr<Process> start = control_.start({argv, docker_environment(), "/", output, output});
            if (!start) return JobOutcome{Result::cancelled, std::nullopt, "", ""};
            containers_.push_back(i);  // removed at the end, started or not
            const int code = start->wait().code;
            std::string said;
            {
                std::ifstream in(output);
                said.assign(std::istreambuf_iterator<char>(in), {});
            }
            const std::string last = last_line(said);
            std::error_code ec;
            fs::remove(output, ec);
            if (control_.cancelled()) return JobOutcome{Result::cancelled, std::nullopt, "", ""};
            if (code != 0) {
                return JobOutcome{Result::failed, std::nullopt, "JobPreparationFailed",
                                  "The container of node " + in_.nodes[i].id + " could not start: " + last};
            }
            log_.node_line(i, "container " + run.name + " started on " + describe(in_.nodes[i]));
        }
        return std::nullopt;
    }

    ProcessSpec spec_for(const PlannedProcess& planned) {
        const size_t node = planned.node;
        Environment env = envs_[node];
        for (const auto& [name, value] : planned.env) env[name] = expand_variables(value, envs_[node]);
        std::vector<std::string> argv{shell_, "-c", planned.command};
        if (planned.mpi_launcher) {
            // mpirun runs on the machine beside the master node (on the master node's host when
            // the nodes are hosts); its ranks enter their nodes.
            argv[0] = "/bin/bash";
            env["OMPI_ALLOW_RUN_AS_ROOT"] = "1";
            env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1";
            env["BAI_MPI_NODES"] = (dirs_[0] / "mpi-nodes").string();
            env["TMPDIR"] = (in_.nodes[0].root / "tmp").string();
            if (in_.nodes[0].hosts) {
                // With docker, on the master's host itself, as locally beside the nodes: in the
                // master's container it would have neither srun nor docker to reach the others.
                std::vector<std::string> prefix = runtime_.kind == RuntimeKind::docker ? step_prefix(0) : wrapper(0, env);
                prefix.insert(prefix.end(), argv.begin(), argv.end());
                argv = std::move(prefix);
            }
        } else if (std::vector<std::string> prefix = wrapper(node, env); !prefix.empty()) {
            if (runtime_.kind == RuntimeKind::docker) env = merged(docker_environment(), env);
            prefix.insert(prefix.end(), argv.begin(), argv.end());
            argv = std::move(prefix);
        }
        // On a host, srun writes the output here: into the share's directory in the store (the
        // node's mount point here shows nothing where the share is mounted on the host alone).
        const fs::path logs = in_.nodes[node].hosts ? in_store(stdouterr_) : stdouterr_;
        return {argv, env, dirs_[node], logs / planned.stdout_name, logs / planned.stderr_name};
    }

    static Environment merged(Environment base, const Environment& over) {
        for (const auto& [name, value] : over) base[name] = value;
        return base;
    }

    // Whether the job's command names a declared workload (scenarios): it runs no process.
    bool played() const { return in_.workloads && in_.clock && !plan_.processes.empty() && in_.workloads->plays(plan_.processes[0].command); }

    // A job whose command names a declared workload (scenarios) runs no process.
    std::optional<JobOutcome> play_declared_workload() {
        if (!played()) return std::nullopt;
        const PlannedProcess& master = plan_.processes[0];
        WorkloadContext context{in_.job_id,
                                envs_[0],
                                // Through the node's mounts, as the job's own writes: their faults apply.
                                [this](const std::string& path) { return host_path(path, "workload file"); },
                                in_store(stdouterr_) / master.stdout_name,
                                in_.started,
                                *in_.clock,
                                control_};
        std::optional<JobOutcome> outcome = in_.workloads->play(master.command, context);
        if (outcome) log_.line("declared workload played: " + master.command);
        return outcome;
    }

    // Starts them all, waits for the required ones, then stops the others. The result is the
    // first non-zero exit code of a required process, in plan order.
    JobOutcome run_processes(const std::vector<PlannedProcess>& processes) {
        std::vector<std::shared_ptr<Process>> started;
        for (const PlannedProcess& planned : processes) {
            std::shared_ptr<Process> p;
            try {
                p = control_.start(spec_for(planned));
            } catch (const std::exception& e) {
                log_.node_line(planned.node, planned.role + " on " + describe(in_.nodes[planned.node]) + " did not start: " + e.what());
                control_.cancel("");
                for (auto& s : started) s->wait();
                return {Result::failed, 127, "", ""};
            }
            if (!p) break;
            log_.node_line(planned.node, planned.role + " started on " + describe(in_.nodes[planned.node]) + ", pid " + std::to_string(p->pid()) +
                      ", output " + planned.stdout_name + ": " + planned.command);
            started.push_back(std::move(p));
        }
        std::optional<int> failed_code;
        for (size_t i = 0; i < started.size(); ++i) {
            if (!processes[i].required) continue;
            ExitStatus status = started[i]->wait();
            log_.node_line(processes[i].node, processes[i].role + " exited with code " + std::to_string(status.code) +
                      (status.signal ? " (signal " + std::to_string(status.signal) + ")" : ""));
            if (status.code != 0 && !failed_code) failed_code = status.code;
        }
        for (size_t i = 0; i < started.size(); ++i) {
            if (processes[i].required) continue;
            control_.kill(started[i]);
            started[i]->wait();
            log_.node_line(processes[i].node, processes[i].role + " stopped: the job's other processes are done");
        }
        if (control_.cancelled() || started.size() < processes.size()) return {Result::cancelled, std::nullopt, "", ""};
        if (failed_code) return {Result::failed, failed_code, "", ""};
        return {Result::succeeded, 0, "", ""};
    }

    // The job's containers go with it, and what still runs in them (a killed `docker exec`
    // client leaves its process running there): removed by name.
    // On hosts each by its host's engine (a host taken away meanwhile has none to ask: its
    // holder's own cleanup removes them there, slurm_commands.h's holder_script).
    void remove_containers() {
        std::vector<std::vector<std::string>> commands;
        for (size_t i : containers_) {
            if (in_.nodes[i].hosts || commands.empty()) {  // this machine's engine removes them all at once
                try {
                    commands.push_back(host_prefix(i, "docker-rm"));
                } catch (const std::exception& e) {
                    log_.node_line(i, "could not remove the container of " + describe(in_.nodes[i]) + ": " + e.what());
                    continue;
                }
                commands.back().insert(commands.back().begin(), {"timeout", "60"});
                commands.back().insert(commands.back().end(), {docker_client(i), "rm", "--force"});
            }
            commands.back().push_back(container_name(i));
        }
        containers_.clear();
        for (const std::vector<std::string>& argv : commands) {
            try {
                Process::start({argv, docker_environment(), "/", "/dev/null", "/dev/null"})->wait();
            } catch (const std::exception& e) {
                log_.line(std::string("could not remove the job's containers: ") + e.what());
            }
        }
    }

    JobOutcome finish(JobOutcome outcome) {
        if (gateway_) gateway_->stop();  // what ssh still runs on the nodes ends with the job
        if (outcome.result == Result::cancelled) {
            log_.line("stopped: " + control_.reason());
        } else {
            log_.line(outcome.result == Result::succeeded ? "succeeded" : "failed: " + outcome.error_message);
        }
        remove_containers();
        // What the job left running on its nodes' hosts (a SIGKILL to an srun client does not
        // reach its step) ends with it, its own volumes' mounts there first (told to unmount).
        for (auto& volumes : job_volumes_) volumes->release_on_hosts();
        for (const JobNode& node : in_.nodes) {
            if (!node.hosts) continue;
            try {
                node.hosts->kill_processes(node.id);
            } catch (const std::exception& e) {
                log_.line("could not stop what is left on " + node.id + ": " + e.what());
            }
        }
        log_.close();
        if (!stdouterr_.empty() && !in_.diagnosis_pool.empty()) {
            try {
                write_diagnosis_archive(in_store(stdouterr_), in_.diagnosis_pool);
            } catch (const std::exception&) {
                // The archive is the service's extra: a job's logs stand without it.
            }
        }
        roots_.clear();  // every process has exited: the writable layers go
        job_volumes_.clear();  // and the job's own volumes are unmounted (a later job does not see them)
        std::vector<fs::path> written = outputs_;
        if (!stdouterr_.empty()) written.push_back(in_store(stdouterr_));
        adopt_share_writes(files_, written);
        return outcome;
    }

    const JobRunInputs& in_;
    const StorageAccess& storage_;
    storage::FileStore& files_;
    RunControl& control_;
    ExecutionLog log_;
    RuntimeDecision runtime_;
    std::vector<arm::Volume> job_volume_list_;   // the job's own mountVolumes
    std::optional<std::uint64_t> shm_bytes_;     // containerSettings.shmSize
    LaunchPlan plan_;
    std::vector<fs::path> dirs_;  // each node's job directory on this machine
    std::vector<NodeView> views_;
    std::vector<Environment> envs_;
    std::vector<SandboxSpec> sandboxes_;
    std::vector<std::unique_ptr<WritableRoot>> roots_;
    std::vector<std::unique_ptr<AttachedVolumes>> job_volumes_;  // per node
    BackingDirectories share_dirs_;  // master's share mount points -> store directories
    ImageSource image_;  // docker: the image and its registry's credentials
    mutable std::string run_tag_;  // in the names of this run's containers and steps (run_tag())
    int steps_ = 0;
    std::vector<size_t> containers_;  // the nodes whose docker containers were started, removed at the end
    std::vector<std::vector<SandboxBind>> container_binds_;  // each node's container's binds
    RuntimeAvailability available_;  // what could run the job's container where its nodes are
    std::unique_ptr<NodeGateway> gateway_;
    std::string shell_ = "/bin/bash";
    fs::path stdouterr_;
    std::vector<fs::path> outputs_;
};

}  // namespace

JobOutcome run_job(const JobRunInputs& in, const StorageAccess& storage, RunControl& control) {
    return Runner(in, storage, control).run();
}

void write_mpi_agent(const fs::path& path) {
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    write_file(path,
               "#!/bin/sh\n"
               "# plm_rsh_agent for mpirun: runs the command on the emulated node named by its address.\n"
               "host=\"$1\"\nshift\nexec \"$BAI_MPI_NODES/$host\" \"$*\"\n",
               fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read |
                   fs::perms::others_exec);
}

}  // namespace bai::engine
