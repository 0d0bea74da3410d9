#include "emulator/engine/launch_plan.h"

#include <algorithm>

#include <stdexcept>

namespace bai::engine {
namespace {

using nlohmann::json;

constexpr int kTensorFlowFirstPort = 2222;

std::string text(const json& block, const char* field) {
    return block.contains(field) && block[field].is_string() ? block[field].get<std::string>() : "";
}

int count(const json& block, const char* field, int fallback) {
    return block.contains(field) && block[field].is_number_integer() ? block[field].get<int>() : fallback;
}

// "<command> <args>" without a trailing space when there are no arguments.
std::string with_args(std::string command, const std::string& args) {
    if (!args.empty()) command += " " + args;
    return command;
}

std::string python_command(const json& block, const PlanInputs& in, const std::string& args_field = "commandLineArgs") {
    std::string interpreter = text(block, "pythonInterpreterPath");
    if (interpreter.empty()) interpreter = in.default_python;
    return with_args(interpreter + " " + text(block, "pythonScriptFilePath"), text(block, args_field.c_str()));
}

PlannedProcess process(size_t node, std::string role, std::string command, std::string log_suffix) {
    PlannedProcess p;
    p.node = node;
    p.role = std::move(role);
    p.command = std::move(command);
    p.stdout_name = "stdout" + log_suffix + ".txt";
    p.stderr_name = "stderr" + log_suffix + ".txt";
    return p;
}

void plan_mpi(LaunchPlan& plan, const PlanInputs& in, const json& block, const std::string& command) {
    int processes = count(block, "processCount", static_cast<int>(in.nodes.size()));
    if (processes < 1) throw std::invalid_argument("processCount must be at least 1");
    PlannedProcess launcher = process(0, "mpirun (" + std::to_string(processes) + " ranks)",
                                      mpirun_command(in, processes, command), "");
    launcher.mpi_launcher = true;
    plan.processes.push_back(std::move(launcher));
}

// Ranks spread in blocks: ceil(count / nodes) per node, node by node.
size_t node_of_rank(int rank, int ranks, size_t nodes) {
    size_t per_node = (static_cast<size_t>(ranks) + nodes - 1) / nodes;
    return static_cast<size_t>(rank) / per_node;
}

void plan_pytorch(LaunchPlan& plan, const PlanInputs& in, const json& block) {
    int ranks = count(block, "processCount", static_cast<int>(in.nodes.size()));
    if (ranks < 1) throw std::invalid_argument("processCount must be at least 1");
    std::string backend = text(block, "communicationBackend");
    for (int rank = 0; rank < ranks; ++rank) {
        PlannedProcess p = process(node_of_rank(rank, ranks, in.nodes.size()), std::string("rank ").append(std::to_string(rank)),
                                   python_command(block, in), std::string("-").append(std::to_string(rank)));
        p.env["AZ_BATCHAI_TASK_INDEX"] = std::to_string(rank);
        // Shared-file rendezvous on the job's shared temporary directory, as the service's.
        p.env["AZ_BATCHAI_PYTORCH_INIT_METHOD"] = "file://${AZ_BATCHAI_SHARED_JOB_TEMP}/pytorch_init";
        if (!backend.empty()) p.env["AZ_BATCHAI_PYTORCH_BACKEND"] = backend;
        plan.processes.push_back(std::move(p));
    }
}

void plan_caffe2(LaunchPlan& plan, const PlanInputs& in, const json& block) {
    for (size_t node = 0; node < in.nodes.size(); ++node) {
        PlannedProcess p = process(node, std::string("shard ").append(std::to_string(node)), python_command(block, in),
                                   std::string("-").append(std::to_string(node)));
        p.env["AZ_BATCHAI_TASK_INDEX"] = std::to_string(node);
        plan.processes.push_back(std::move(p));
    }
}

std::string host_list(const std::vector<std::string>& hosts) {
    std::string out;
    for (const std::string& h : hosts) out += (out.empty() ? "" : ",") + h;
    return out;
}

void plan_tensorflow(LaunchPlan& plan, const PlanInputs& in, const json& block) {
    const int nodes = static_cast<int>(in.nodes.size());
    const bool distributed = block.contains("workerCount") || block.contains("parameterServerCount") || nodes > 1;
    if (!distributed) {
        plan.processes.push_back(process(0, "master", python_command(block, in, "masterCommandLineArgs"), "-wk-0"));
        return;
    }
    const int ps_count = count(block, "parameterServerCount", 1);
    const int worker_count = count(block, "workerCount", nodes);
    if (ps_count < 0 || worker_count < 1) throw std::invalid_argument("workerCount must be at least 1");
    // Parameter servers first, then workers, each on node (index % nodes), ports from 2222 up
    // per node: the documented example (1 PS and worker 0 on the first node at 2222 and 2223,
    // worker 1 on the second at 2222).
    std::vector<int> next_port(in.nodes.size(), kTensorFlowFirstPort);
    auto place = [&](int index) {
        size_t node = static_cast<size_t>(index % nodes);
        return std::pair{node, in.nodes[node].address + ":" + std::to_string(next_port[node]++)};
    };
    std::vector<std::pair<size_t, std::string>> ps, workers;
    for (int i = 0; i < ps_count; ++i) ps.push_back(place(i));
    for (int i = 0; i < worker_count; ++i) workers.push_back(place(i));
    std::vector<std::string> ps_hosts, worker_hosts;
    for (auto& [node, host] : ps) ps_hosts.push_back(host);
    for (auto& [node, host] : workers) worker_hosts.push_back(host);
    json cluster{{"ps", ps_hosts}, {"worker", worker_hosts}};

    auto add = [&](size_t node, const std::string& role, const std::string& type, int index, const std::string& args,
                   const std::string& log, bool required) {
        PlannedProcess p = process(node, role, python_command(block, in, args), log);
        p.required = required;
        p.env["AZ_BATCHAI_TASK_INDEX"] = std::to_string(index);
        p.env["AZ_BATCHAI_PS_HOSTS"] = host_list(ps_hosts);
        p.env["AZ_BATCHAI_WORKER_HOSTS"] = host_list(worker_hosts);
        json config{{"cluster", cluster}, {"task", {{"type", type}, {"index", index}}}, {"environment", "cloud"}};
        p.env["TF_CONFIG"] = config.dump();
        plan.processes.push_back(std::move(p));
    };
    for (int i = 0; i < ps_count; ++i) {
        add(ps[i].first, "parameter server " + std::to_string(i), "ps", i, "parameterServerCommandLineArgs",
            "-ps-" + std::to_string(i), false);
    }
    for (int i = 0; i < worker_count; ++i) {
        add(workers[i].first, i == 0 ? "master" : "worker " + std::to_string(i), i == 0 ? "master" : "worker", i,
            i == 0 ? "masterCommandLineArgs" : "workerCommandLineArgs", "-wk-" + std::to_string(i), true);
    }
}

void plan_toolkit(LaunchPlan& plan, const json& p, const PlanInputs& in) {
    auto block = [&](const char* name) -> const json* {
        return p.contains(name) && p[name].is_object() ? &p[name] : nullptr;
    };
    if (const json* b = block("cntkSettings")) {
        std::string config = text(*b, "configFilePath");
        bool brain_script = text(*b, "languageType") == "BrainScript" || (!config.empty() && !b->contains("pythonScriptFilePath"));
        return plan_mpi(plan, in, *b,
                        brain_script ? with_args("cntk configFile=" + config, text(*b, "commandLineArgs")) : python_command(*b, in));
    }
    if (const json* b = block("caffeSettings")) {
        std::string config = text(*b, "configFilePath");
        return plan_mpi(plan, in, *b,
                        config.empty() ? python_command(*b, in) : with_args("caffe train --solver=" + config, text(*b, "commandLineArgs")));
    }
    if (const json* b = block("chainerSettings")) return plan_mpi(plan, in, *b, python_command(*b, in));
    if (const json* b = block("horovodSettings")) return plan_mpi(plan, in, *b, python_command(*b, in));
    if (const json* b = block("customMpiSettings")) return plan_mpi(plan, in, *b, text(*b, "commandLine"));
    if (const json* b = block("pyTorchSettings")) return plan_pytorch(plan, in, *b);
    if (const json* b = block("caffe2Settings")) return plan_caffe2(plan, in, *b);
    if (const json* b = block("tensorFlowSettings")) return plan_tensorflow(plan, in, *b);
    const json* custom = block("customToolkitSettings");
    plan.processes.push_back(process(0, "master", custom ? text(*custom, "commandLine") : "", ""));
}

}  // namespace

namespace {

bool loopback_address(const std::string& address) { return address.rfind("127.", 0) == 0; }

// Which network OpenMPI's TCP layers use.
std::string mpi_network(const PlanInputs& in) {
    // One machine: loopback only, the out-of-band and byte-transfer layers stay on lo.
    if (!in.on_hosts) return " --mca oob_tcp_if_include lo --mca btl_tcp_if_include lo";
    // Hosts: their own network, as OpenMPI chooses it; but hosts at loopback addresses on
    // interfaces of their own (several hosts in network namespaces of one machine) need
    // btl_tcp_if_exclude to name lo alone: its default excludes 127.0.0.0/8 by address, and the
    // ranks then find no way to each other.
    const bool all_loopback = std::all_of(in.nodes.begin(), in.nodes.end(),
                                          [](const PlanNode& node) { return loopback_address(node.address); });
    return all_loopback ? " --mca btl_tcp_if_exclude lo" : "";
}

}  // namespace

std::string mpirun_command(const PlanInputs& in, int process_count, const std::string& command) {
    // rtc_hwloc_vmhole none: OpenMPI 4.1's daemons otherwise race to share the hwloc topology in
    // one memory hole when several start on one machine, and one in ten runs crashed (orted,
    // SIGSEGV in hwloc_shmem_topology_write); with it, 0 in 60.
    return "mpirun --hostfile " + shell_quote(in.launcher_hostfile) + " -np " + std::to_string(process_count) +
           " --oversubscribe --bind-to none --mca plm_rsh_agent " + shell_quote(in.mpi_agent) +
           " --mca routed direct --mca rtc_hwloc_vmhole none" + mpi_network(in) +
           // Not resolving addresses to interfaces of its own, mpirun takes every node for another
           // (the master's address is one of its host's) and enters each through the agent.
           (in.master_through_agent ? " --mca if_base_do_not_resolve 1" : "") +
           (in.rank_directory.empty() ? std::string() : " --wdir " + shell_quote(in.rank_directory)) + " /bin/bash -c " +
           shell_quote(command);
}

LaunchPlan plan_launch(const json& properties, const PlanInputs& in) {
    if (in.nodes.empty()) throw std::invalid_argument("the job has no nodes");
    LaunchPlan plan;
    plan.tool_type = properties.value("toolType", "custom");
    for (const PlanNode& node : in.nodes) {
        plan.hostfile += node.address + " slots=" + std::to_string(node.slots < 1 ? 1 : node.slots) + "\n";
    }
    if (properties.contains("jobPreparation") && properties["jobPreparation"].is_object()) {
        std::string command = text(properties["jobPreparation"], "commandLine");
        for (size_t node = 0; node < in.nodes.size(); ++node) {
            // One node: the names the service used; several: the master keeps them, the others
            // add their node id (the service's multi-node names are not documented).
            std::string suffix = node == 0 ? "-job_prep" : "-job_prep-" + in.nodes[node].id;
            plan.preparation.push_back(process(node, "job preparation", command, suffix));
        }
    }
    plan_toolkit(plan, properties, in);
    return plan;
}

}  // namespace bai::engine
