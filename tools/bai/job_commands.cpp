// bai job create/list/show/terminate/delete/wait and job node list; `job file` is in
// job_file_commands.cpp.
#include <chrono>
#include <thread>

#include "tools/bai/command_flags.h"
#include "tools/bai/commands.h"
#include "tools/bai/job_commands.h"
#include "tools/bai/job_scope.h"
#include "tools/bai/json_file.h"
#include "tools/bai/storage_keys.h"

namespace bai::cli {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

json cluster_cell(const json& row) {
    return row.contains("cluster") && row["cluster"].is_object() ? json(last_segment(row["cluster"].value("id", "")))
                                                                 : json();
}
json cluster_group_cell(const json& row) {
    if (!row.contains("cluster") || !row["cluster"].is_object()) return nullptr;
    std::string id = row["cluster"].value("id", "");
    std::string lower = id;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    size_t at = lower.find("/resourcegroups/");
    if (at == std::string::npos) return nullptr;
    size_t start = at + 16;
    return id.substr(start, id.find('/', start) - start);
}

const std::vector<Column> kJobTable = {{"Name", "name"},
                                       {"Resource Group", "resourceGroup"},
                                       {"Cluster", "", cluster_cell},
                                       {"Cluster RG", "", cluster_group_cell},
                                       {"Nodes", "nodeCount"},
                                       {"State", "executionState"},
                                       {"Exit code", "executionInfo.exitCode"}};
const std::vector<Column> kNodeTable = {{"Node ID", "nodeId"}, {"IP", "ipAddress"}, {"SSH Port", "port"}};

struct CreateFlags : JobFlags {
    std::string cluster, config_file, location;
    std::string afs_name, afs_path = "afs", bfs_name, bfs_path = "bfs";
    StorageFlags storage;
};

void add_create(CLI::App* group, CommandContext& ctx) {
    auto f = std::make_shared<CreateFlags>();
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
            props["cluster"] = {{"id", scope.cluster_id(ctx.arm(), f->cluster)}};
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

void add_read_commands(CLI::App* group, CommandContext& ctx) {
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
                  kNodeTable);
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
        confirm_or_throw(t->yes, "Are you sure you want to perform this operation?");
        ctx.arm().post_action(scope.path(ctx.arm(), t->name) + "/terminate", scope.api(), t->no_wait);
    });

    auto d = std::make_shared<JobFlags>();
    c = group->add_subcommand("delete", "Delete a job.");
    add_job_flags(c, *d, "-n,--name");
    add_yes_flag(c, d->yes);
    add_no_wait_flag(c, d->no_wait);
    c->callback([&ctx, d] {
        JobScope scope = d->scope(ctx);
        confirm_or_throw(d->yes, "Are you sure you want to perform this operation?");
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
        const json& p = job["properties"];
        json info = p.value("executionInfo", json::object());
        std::string end = info.value("endTime", "");
        int code = info.contains("exitCode") && info["exitCode"].is_number_integer() ? info["exitCode"].get<int>()
                                                                                      : (execution_state(job) == "succeeded" ? 0 : 1);
        std::fprintf(stderr, "Job completed at %s; execution state: %s; exit code: %d\n", end.c_str(),
                     p.value("executionState", "").c_str(), code);
        if (code != 0) throw CliError("", code);
    });
}

}  // namespace

void add_job_flags(CLI::App* c, JobFlags& f, const std::string& name_flags) {
    add_group_flag(c, f.group);
    add_workspace_flag(c, f.workspace);
    add_experiment_flag(c, f.experiment);
    if (!name_flags.empty()) c->add_option(name_flags, f.name, "Name of the job")->required();
}

json wait_for_job(CommandContext& ctx, const JobScope& scope, const std::string& name, double interval_seconds) {
    auto interval = std::chrono::duration<double>(interval_seconds);
    auto pause = std::min(std::chrono::duration<double>(0.05), interval);
    while (true) {
        json job = ctx.arm().get(scope.path(ctx.arm(), name), scope.api());
        std::string state = job["properties"].value("executionState", "");
        ctx.progress("Job state: " + state);
        if (job_finished(job)) {
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
    add_create(group, ctx);
    add_read_commands(group, ctx);
    add_control_commands(group, ctx);
    add_job_file_commands(group, ctx);
    add_job_validate_command(group, ctx);
    add_job_submit_command(group, ctx);
}

}  // namespace bai::cli
