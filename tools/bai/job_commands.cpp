// bai job create/list/show/terminate/delete/wait and job node list; `job file` is in
// job_file_commands.cpp.
#include <chrono>
#include <thread>

#include "tools/bai/command_flags.h"
#include "tools/bai/commands.h"
#include "tools/bai/job_commands.h"
#include "tools/bai/job_scope.h"
#include "tools/bai/json_fields.h"
#include "tools/bai/json_file.h"
#include "tools/bai/storage_keys.h"

namespace bai::cli {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

json cluster_cell(const json& row) {
    std::string id = string_field(object_field(row, "cluster"), "id");
    return id.empty() ? json() : json(last_segment(id));
}
json cluster_group_cell(const json& row) {
    std::string group = id_segment(string_field(object_field(row, "cluster"), "id"), "resourceGroups");
    return group.empty() ? json() : json(group);
}

json cluster_workspace_cell(const json& row) {
    return workspace_cell(object_field(row, "cluster"));
}

const std::vector<Column> kJobTable = {{"Name", "name"},
                                       {"Resource Group", "resourceGroup"},
                                       {"Cluster", "", cluster_cell},
                                       {"Cluster RG", "", cluster_group_cell},
                                       {"Cluster Workspace", "", cluster_workspace_cell},
                                       {"Tool", "toolType"},
                                       {"Nodes", "nodeCount"},
                                       {"State", "executionState"},
                                       {"Exit code", "executionInfo.exitCode"}};

struct JobCreateFlags : JobFlags {
    std::string cluster, config_file, location;
    std::string afs_name, afs_path = "afs", bfs_name, bfs_path = "bfs";
    StorageFlags storage;
};

void add_job_create(CLI::App* group, CommandContext& ctx) {
    auto f = std::make_shared<JobCreateFlags>();
    CLI::App* c = group->add_subcommand("create", "Create (submit) a job.");
    add_job_flags(c, *f, "-n,--name");
    c->add_option("-c,--cluster,-r,--cluster-name", f->cluster, "Name of the cluster to run the job on");
    c->add_option("-f,--config-file,--config", f->config_file, "The job.json (JobCreateParameters)")->required();
    add_location_flag(c, f->location);
    c->add_option("--afs-name", f->afs_name, "Azure file share to mount for the job");
    c->add_option("--afs-mount-path", f->afs_path, "Where, under $AZ_BATCHAI_JOB_MOUNT_ROOT");
    c->add_option("--bfs-name", f->bfs_name, "Blob container to mount for the job");
    c->add_option("--bfs-mount-path", f->bfs_path, "Where, under $AZ_BATCHAI_JOB_MOUNT_ROOT");
    c->add_option("--storage-account-name", f->storage.account,
                  "Storage account for <AZURE_BATCHAI_STORAGE_ACCOUNT>, --afs-name and --bfs-name");
    c->add_option("--storage-account-key", f->storage.key, "Its key (default: read from the account)");
    add_no_wait_flag(c, f->no_wait);
    c->callback([&ctx, f] {
        JobScope scope = f->scope(ctx);
        json body = read_json_file(f->config_file, "--config-file");
        if (!body.contains("properties") || !body["properties"].is_object()) {
            throw CliError("--config-file: '" + f->config_file + "' has no \"properties\" object", kExitUsage);
        }
        json& props = body["properties"];
        if (!f->cluster.empty()) {
            // A name in the job's workspace, or the ARM id of a cluster anywhere (as az took).
            bool id = f->cluster.rfind("/subscriptions/", 0) == 0;
            props["cluster"] = {{"id", id ? f->cluster : scope.cluster_id(ctx.arm(), f->cluster)}};
        } else if (!props.contains("cluster")) {
            throw CliError("the following argument is required: --cluster/-c", kExitUsage);
        }
        StorageKeys keys(ctx, f->storage);
        json volumes = props.value("mountVolumes", json::object());
        if (!f->afs_name.empty()) add_share_volume(volumes, keys, f->afs_name, f->afs_path);
        if (!f->bfs_name.empty()) add_container_volume(volumes, keys, f->bfs_name, f->bfs_path);
        patch_mount_volumes(volumes, keys);
        if (!volumes.empty()) props["mountVolumes"] = volumes;
        if (scope.preview()) {
            // The preview's job.json puts volumes in the cluster; job-level ones are unknown there.
            if (props.contains("mountVolumes")) throw CliError("job-level mount volumes need a workspace (-w)", kExitUsage);
            body["location"] = ctx.location(f->location, scope.group);
        }
        json created = ctx.arm().create(scope.path(ctx.arm(), f->name), scope.api(), body, f->no_wait);
        ctx.print(az_view(created), kJobTable);
    });
}

void add_job_read_commands(CLI::App* group, CommandContext& ctx) {
    auto l = std::make_shared<JobFlags>();
    CLI::App* c = group->add_subcommand("list", "List jobs.");
    add_job_flags(c, *l, "");
    c->callback([&ctx, l] {
        JobScope scope = l->scope(ctx);
        ctx.print(az_view_list(ctx.arm().list(scope.list_path(ctx.arm()), scope.api())), kJobTable);
    });

    auto s = std::make_shared<JobFlags>();
    c = group->add_subcommand("show", "Show a job.");
    add_job_flags(c, *s, "-n,--name");
    c->callback([&ctx, s] {
        JobScope scope = s->scope(ctx);
        ctx.print(az_view(ctx.arm().get(scope.path(ctx.arm(), s->name), scope.api())), kJobTable);
    });

    auto n = std::make_shared<JobFlags>();
    CLI::App* node = group->add_subcommand("node", "The nodes a job runs on.");
    node->require_subcommand(1);
    c = node->add_subcommand("list", "List the nodes of a job and how to reach them.");
    add_job_flags(c, *n, "-j,--job,-n,--name");
    auto list_nodes = [&ctx, n] {
        JobScope scope = n->scope(ctx);
        ctx.print(ctx.arm().list(scope.path(ctx.arm(), n->name) + "/listRemoteLoginInformation", scope.api(), {}, "POST"),
                  kRemoteLoginTable);
    };
    c->callback(list_nodes);
    c = group->add_subcommand("list-nodes", "List the nodes of a job (the preview CLI's spelling).");
    add_job_flags(c, *n, "-n,--name");
    c->callback(list_nodes);
}

void add_control_commands(CLI::App* group, CommandContext& ctx) {
    auto t = std::make_shared<JobFlags>();
    CLI::App* c = group->add_subcommand("terminate", "Terminate a job.");
    add_job_flags(c, *t, "-n,--name");
    add_yes_flag(c, t->yes);
    add_no_wait_flag(c, t->no_wait);
    c->callback([&ctx, t] {
        JobScope scope = t->scope(ctx);
        confirm_or_throw(t->yes);
        ctx.arm().post_action(scope.path(ctx.arm(), t->name) + "/terminate", scope.api(), t->no_wait);
    });

    auto d = std::make_shared<JobFlags>();
    c = group->add_subcommand("delete", "Delete a job.");
    add_job_flags(c, *d, "-n,--name");
    add_yes_flag(c, d->yes);
    add_no_wait_flag(c, d->no_wait);
    c->callback([&ctx, d] {
        JobScope scope = d->scope(ctx);
        confirm_or_throw(d->yes);
        ctx.arm().delete_resource(scope.path(ctx.arm(), d->name), scope.api(), d->no_wait);
    });

    auto w = std::make_shared<JobFlags>();
    auto interval = std::make_shared<double>(1.0);
    c = group->add_subcommand("wait", "Wait for a job to finish; exit with its exit code.");
    add_job_flags(c, *w, "-n,--name");
    c->add_option("--interval", *interval, "Polling interval in seconds (default 1)")->check(CLI::PositiveNumber);
    c->callback([&ctx, w, interval] {
        JobScope scope = w->scope(ctx);
        json job = wait_for_job(ctx, scope, w->name, *interval);
        const json& info = object_field(object_field(job, "properties"), "executionInfo");
        auto code = integer_field(info, "exitCode");
        std::fprintf(stderr, "Job completed at %s; execution state: %s; exit code: %s\n",
                     string_field(info, "endTime").c_str(), execution_state(job).c_str(),
                     code ? std::to_string(*code).c_str() : "none");
        if (int status = exit_status_of(job); status != 0) throw CliError("", status);
    });
}

}  // namespace

void add_job_flags(CLI::App* c, JobFlags& f, const std::string& name_flags) {
    add_group_flag(c, f.group);
    add_workspace_flag(c, f.workspace);
    add_experiment_flag(c, f.experiment);
    if (!name_flags.empty()) c->add_option(name_flags, f.name, "Name of the job")->required();
}

int exit_status_of(const json& job) {
    auto code = integer_field(object_field(object_field(job, "properties"), "executionInfo"), "exitCode");
    if (!code) return execution_state(job) == "succeeded" ? 0 : 1;
    return *code == 0 ? 0 : (*code > 0 && *code < 256 ? static_cast<int>(*code) : 1);
}

// "Job state: queued; cluster gpu: 1 preparing, 0 idle, 0 running (target 1)".
std::string progress_line(CommandContext& ctx, const JobScope& scope, const json& job) {
    std::string state = execution_state(job);
    std::string line = "Job state: " + state;
    std::string cluster_id = string_field(object_field(object_field(job, "properties"), "cluster"), "id");
    if (state != "queued" || cluster_id.empty()) return line;
    ArmClient::Response r = ctx.arm().send("GET", cluster_id, scope.api());
    if (r.status != 200) return line;
    const json& p = object_field(r.body, "properties");
    const json& counts = object_field(p, "nodeStateCounts");
    auto count = [&](const char* key) { return std::to_string(integer_field(counts, key).value_or(0)); };
    return line + "; waiting for nodes of cluster " + last_segment(cluster_id) + " (" + string_field(p, "allocationState") +
           "): " + count("preparingNodeCount") + " preparing, " + count("idleNodeCount") + " idle, " +
           count("runningNodeCount") + " running, " + count("unusableNodeCount") + " unusable";
}

json wait_for_job(CommandContext& ctx, const JobScope& scope, const std::string& name, double interval_seconds,
                  bool until_started) {
    auto interval = std::chrono::duration<double>(interval_seconds);
    auto pause = std::min(std::chrono::duration<double>(0.05), interval);
    while (true) {
        json job = ctx.arm().get(scope.path(ctx.arm(), name), scope.api());
        ctx.progress(progress_line(ctx, scope, job));
        if (job_finished(job) || (until_started && execution_state(job) != "queued")) {
            ctx.end_progress();
            return job;
        }
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, interval);
    }
}

void add_job_commands(CLI::App& app, CommandContext& ctx) {
    CLI::App* group = app.add_subcommand("job", "Manage jobs.");
    group->require_subcommand(1);
    add_job_create(group, ctx);
    add_job_read_commands(group, ctx);
    add_control_commands(group, ctx);
    add_job_file_commands(group, ctx);
    add_job_validate_command(group, ctx);
    add_job_submit_command(group, ctx);
}

}  // namespace bai::cli
