#include "emulator/engine/job_run.h"

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <stdexcept>

#include "common/time/timestamps.h"
#include "emulator/arm/mount_volumes.h"
#include "emulator/engine/job_environment.h"
#include "emulator/engine/launch_plan.h"
#include "emulator/engine/node_setup.h"
#include "emulator/engine/volume_links.h"

namespace bai::engine {

namespace fs = std::filesystem;
using nlohmann::json;
using Result = JobOutcome::Result;

namespace {

class ExecutionLog {
public:
    void open(const fs::path& path) { out_.open(path, std::ios::app); }
    void line(const std::string& text) {
        if (!out_) return;
        out_ << time::format_iso8601(time::now(), 3) << " " << text << "\n";
        out_.flush();
    }

private:
    std::ofstream out_;
};

void write_file(const fs::path& path, const std::string& text, fs::perms perms = fs::perms::owner_read | fs::perms::owner_write) {
    std::ofstream out(path, std::ios::trunc);
    out << text;
    out.close();
    if (!out) throw std::runtime_error("cannot write " + path.string());
    std::error_code ec;
    fs::permissions(path, perms, ec);
}

// On one node: the job's directory wiped and made again, with its mounts and shared link.
fs::path prepare_node_directory(const JobNode& node, const JobRunInputs& in, storage::FileStore& files,
                                std::vector<std::string>& notes) {
    fs::path dir = node.root / "jobs" / in.job_name;
    std::error_code ec;
    fs::remove_all(dir, ec);
    fs::create_directories(dir / "mounts", ec);
    if (ec) throw std::runtime_error("cannot create " + dir.string() + ": " + ec.message());
    fs::create_directory_symlink(in.shared_dir, dir / "shared", ec);
    if (ec) throw std::runtime_error("cannot link " + (dir / "shared").string() + ": " + ec.message());
    attach_volumes(dir / "mounts", arm::volumes_of(in.properties.value("mountVolumes", json())), files, notes);
    return dir;
}

// The script the MPI agent runs for a node: the command in that node's environment.
std::string node_script(const JobNode& node, const fs::path& cwd, const Environment& env) {
    // Appends throughout: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string here.
    std::string script = "#!/bin/sh\n# Runs its argument on emulated node ";
    script.append(node.id).append(" (").append(node.address).append(").\ncd ");
    script.append(shell_quote(cwd.string())).append(" || exit 1\nexec env -i");
    for (const auto& [name, value] : env) script.append(" ").append(shell_quote(std::string(name).append("=").append(value)));
    script.append(" /bin/sh -c \"$1\"\n");
    return script;
}

std::string describe(const JobNode& node) { return node.id + " (" + node.address + ")"; }

class Runner {
public:
    Runner(const JobRunInputs& in, storage::FileStore& files, RunControl& control)
        : in_(in), files_(files), control_(control) {}

    JobOutcome run() {
        try {
            set_up();
        } catch (const std::exception& e) {
            log_.line(std::string("the job cannot start: ") + e.what());
            return finish({Result::failed, std::nullopt, "JobPreparationFailed", e.what()});
        }
        if (!plan_.preparation.empty()) {
            log_.line("job preparation on " + std::to_string(plan_.preparation.size()) + " node(s)");
            JobOutcome prep = run_processes(plan_.preparation);
            if (prep.result != Result::succeeded) {
                if (prep.result == Result::failed) {
                    prep.error_code = "JobPreparationFailed";
                    prep.error_message = "The job preparation task failed with exit code " + std::to_string(*prep.exit_code);
                }
                return finish(prep);
            }
        }
        JobOutcome outcome = run_processes(plan_.processes);
        if (outcome.result == Result::failed) {
            outcome.error_code = "JobFailed";
            outcome.error_message = "Job failed with non-zero exit code";
        }
        return finish(outcome);
    }

private:
    void set_up() {
        std::vector<std::string> notes;
        PlanInputs plan_inputs;
        plan_inputs.default_python = in_.default_python;
        plan_inputs.mpi_agent = in_.mpi_agent.string();
        std::vector<std::string> hosts;
        for (const JobNode& node : in_.nodes) {
            plan_inputs.nodes.push_back({node.id, node.address, node.slots});
            hosts.push_back(node.address);
        }
        std::error_code ec;
        fs::create_directories(in_.shared_dir, ec);
        for (const JobNode& node : in_.nodes) {
            fs::path dir = prepare_node_directory(node, in_, files_, notes);
            dirs_.push_back(dir);
            NodePaths paths{node.root.string() + "/mounts", (dir / "mounts").string(), node.root.string() + "/jobs",
                            dir.string(), (dir / "shared").string(), (dir / "hostfile").string()};
            Environment env = node_base_environment(node.root);
            for (auto& [name, value] : job_environment({in_.properties, paths, hosts, {node.gpus, false}})) env[name] = value;
            envs_.push_back(std::move(env));
        }
        plan_inputs.launcher_hostfile = (dirs_[0] / "hostfile").string();
        plan_ = plan_launch(in_.properties, plan_inputs);

        const Environment& master = envs_[0];
        stdouterr_ = stdouterr_directory(in_.properties, master);
        fs::create_directories(stdouterr_, ec);
        if (ec) throw std::runtime_error("cannot create the stdouterr directory " + stdouterr_.string() + ": " + ec.message());
        log_.open(stdouterr_ / "execution.log");
        log_.line("job " + in_.job_id);
        std::string image = in_.properties.value("/containerSettings/imageSourceRegistry/image"_json_pointer, "");
        log_.line(image.empty() ? std::string("runtime: host (the job has no containerSettings)")
                                : std::string("runtime: host, not the image ")
                                      .append(image)
                                      .append(" (this emulator does not run containers yet: the job runs on the host)"));
        for (size_t i = 0; i < in_.nodes.size(); ++i) {
            log_.line("node " + std::to_string(i) + ": " + describe(in_.nodes[i]) + ", GPUs: " +
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
            fs::path dir = output_directory(in_.properties, output, master);
            fs::create_directories(dir, ec);
            if (ec) throw std::runtime_error("cannot create the output directory " + dir.string() + ": " + ec.message());
            outputs_.push_back(dir);
        }
        for (size_t i = 0; i < in_.nodes.size(); ++i) {
            write_file(dirs_[i] / "hostfile", plan_.hostfile, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
        }
        // The scripts through which the MPI agent enters each node: only MPI toolkits need them.
        if (std::any_of(plan_.processes.begin(), plan_.processes.end(), [](const PlannedProcess& p) { return p.mpi_launcher; })) {
            fs::create_directories(dirs_[0] / "mpi-nodes", ec);
            for (size_t i = 0; i < in_.nodes.size(); ++i) {
                write_file(dirs_[0] / "mpi-nodes" / in_.nodes[i].address, node_script(in_.nodes[i], dirs_[i], envs_[i]),
                           fs::perms::owner_all);
            }
        }
        log_.line("toolkit " + plan_.tool_type + ": " + std::to_string(plan_.processes.size()) + " process(es)");
    }

    ProcessSpec spec_for(const PlannedProcess& planned) {
        Environment env = envs_[planned.node];
        for (const auto& [name, value] : planned.env) env[name] = expand_variables(value, envs_[planned.node]);
        if (planned.mpi_launcher) {
            env["OMPI_ALLOW_RUN_AS_ROOT"] = "1";
            env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1";
            env["BAI_MPI_NODES"] = (dirs_[0] / "mpi-nodes").string();
        }
        return {{"/bin/bash", "-c", planned.command}, env, dirs_[planned.node], stdouterr_ / planned.stdout_name,
                stdouterr_ / planned.stderr_name};
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
                log_.line(planned.role + " on " + describe(in_.nodes[planned.node]) + " did not start: " + e.what());
                control_.cancel("");
                for (auto& s : started) s->wait();
                return {Result::failed, 127, "", ""};
            }
            if (!p) break;
            log_.line(planned.role + " started on " + describe(in_.nodes[planned.node]) + ", pid " + std::to_string(p->pid()) +
                      ", output " + planned.stdout_name + ": " + planned.command);
            started.push_back(std::move(p));
        }
        std::optional<int> failed_code;
        for (size_t i = 0; i < started.size(); ++i) {
            if (!processes[i].required) continue;
            ExitStatus status = started[i]->wait();
            log_.line(processes[i].role + " exited with code " + std::to_string(status.code) +
                      (status.signal ? " (signal " + std::to_string(status.signal) + ")" : ""));
            if (status.code != 0 && !failed_code) failed_code = status.code;
        }
        for (size_t i = 0; i < started.size(); ++i) {
            if (processes[i].required) continue;
            control_.kill(started[i]);
            started[i]->wait();
            log_.line(processes[i].role + " stopped: the job's other processes are done");
        }
        if (control_.cancelled() || started.size() < processes.size()) return {Result::cancelled, std::nullopt, "", ""};
        if (failed_code) return {Result::failed, failed_code, "", ""};
        return {Result::succeeded, 0, "", ""};
    }

    JobOutcome finish(JobOutcome outcome) {
        if (outcome.result == Result::cancelled) {
            log_.line("stopped: " + control_.reason());
        } else {
            log_.line(outcome.result == Result::succeeded ? "succeeded" : "failed: " + outcome.error_message);
        }
        std::vector<fs::path> written = outputs_;
        if (!stdouterr_.empty()) written.push_back(stdouterr_);
        adopt_share_writes(files_, written);
        return outcome;
    }

    const JobRunInputs& in_;
    storage::FileStore& files_;
    RunControl& control_;
    ExecutionLog log_;
    LaunchPlan plan_;
    std::vector<fs::path> dirs_;
    std::vector<Environment> envs_;
    fs::path stdouterr_;
    std::vector<fs::path> outputs_;
};

}  // namespace

JobOutcome run_job(const JobRunInputs& in, storage::FileStore& files, RunControl& control) {
    return Runner(in, files, control).run();
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
