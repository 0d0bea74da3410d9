// bai job submit: the seed's 01_JobSubmit workflow in one command, driven by a project.json
// (its shape is in tools/bai/README.md): upload the scripts to the share, create the workspace
// and experiment when missing (and the cluster, when the project describes one), submit a job
// named by the time, stream its stdout, download its outputs and logs, and scale the cluster to
// 0 nodes unless persistCluster is true. Exits with the job's exit code.
#include <ctime>
#include <filesystem>

#include "tools/bai/cli_error.h"
#include "tools/bai/command_flags.h"
#include "tools/bai/http_client.h"
#include "tools/bai/job_commands.h"
#include "tools/bai/json_fields.h"
#include "tools/bai/json_file.h"
#include "tools/bai/share_upload.h"
#include "tools/bai/storage_keys.h"

namespace bai::cli {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

struct SubmitFlags {
    std::string project = "project.json";
    std::string name;
};

std::string required_text(const json& o, const char* key, const std::string& where) {
    std::string value = string_field(o, key);
    if (value.empty()) throw CliError(where + ": \"" + key + "\" is required (a string)", kExitUsage);
    return value;
}

std::string timestamp_name(const std::string& prefix) {
    std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%d_%H%M%S", &utc);
    return prefix + "_" + stamp;
}

bool exists(ArmClient& arm, const std::string& path) { return arm.send("GET", path, kApi).status == 200; }

void ensure_cluster(CommandContext& ctx, const JobScope& scope, const json& cluster, const std::string& name,
                    StorageKeys& keys, const std::string& where) {
    std::string path = cluster_path(ctx.arm(), scope.group, *scope.workspace, name);
    if (exists(ctx.arm(), path)) return;
    if (!cluster.is_object()) throw CliError(where + ": cluster '" + name + "' does not exist and \"cluster\" does not describe it");
    json props = {{"vmSize", required_text(cluster, "vmSize", where + " cluster")},
                  {"vmPriority", string_field(cluster, "vmPriority", "dedicated")},
                  {"userAccountSettings", {{"adminUserName", string_field(cluster, "adminUserName", "batchai")},
                                           {"adminUserPassword", string_field(cluster, "adminUserPassword", "Bai-" + name + "-1")}}}};
    long long min_nodes = integer_field(cluster, "minNodes").value_or(0);
    long long max_nodes = integer_field(cluster, "maxNodes").value_or(min_nodes);
    props["scaleSettings"] = min_nodes == max_nodes
                                 ? json{{"manual", {{"targetNodeCount", min_nodes}}}}
                                 : json{{"autoScale", {{"minimumNodeCount", min_nodes}, {"maximumNodeCount", max_nodes},
                                                       {"initialNodeCount", min_nodes}}}};
    if (cluster.contains("mountVolumes")) {
        json volumes = cluster["mountVolumes"];
        patch_mount_volumes(volumes, keys);
        props["nodeSetup"] = {{"mountVolumes", volumes}};
    }
    ctx.progress("Creating cluster " + name);
    ctx.arm().create(path, kApi, {{"properties", props}});
}

void submit(CommandContext& ctx, const SubmitFlags& f) {
    json project = read_json_file(f.project, "--project");
    fs::path base = fs::path(f.project).parent_path();
    std::string where = f.project;
    JobScope scope{ctx.require(string_field(project, "resourceGroup"), "group", where + ": resourceGroup"),
                   ctx.require(string_field(project, "workspace"), "workspace", where + ": workspace"),
                   ctx.require(string_field(project, "experiment"), "experiment", where + ": experiment")};
    const json storage = object_field(project, "storage");
    StorageKeys keys(ctx, {string_field(storage, "accountName"), string_field(storage, "accountKey")});
    const json job_spec = object_field(project, "job");
    json body = read_json_file((base / required_text(job_spec, "config", where + " job")).string(), where + " job.config");
    if (!body.contains("properties") || !body["properties"].is_object()) {
        throw CliError(where + ": the job config has no \"properties\" object", kExitUsage);
    }

    // The scripts go to the share first, where the job.json expects them.
    std::vector<std::string> scripts;
    if (job_spec.contains("scripts") && job_spec["scripts"].is_array()) {
        for (const json& s : job_spec["scripts"]) {
            if (s.is_string()) scripts.push_back(s.get<std::string>());
        }
    }
    if (!string_field(job_spec, "script").empty()) scripts.push_back(string_field(job_spec, "script"));
    if (!scripts.empty()) {
        std::string account = keys.account(where + " storage");
        std::string share = required_text(storage, "share", where + " storage");
        std::string directory = string_field(storage, "scriptDirectory", "scripts");
        endpoints::Endpoints e = ctx.arm().endpoints();
        if (e.file.empty()) discover_storage_endpoints(e);
        ShareUploader uploader(e.file, account, keys.key_for(account));
        uploader.ensure_share(share);
        uploader.ensure_directories(share, directory);
        for (const std::string& script : scripts) {
            fs::path local = base / script;
            std::string target = directory + "/" + local.filename().string();
            uploader.upload(share, target, local);
            std::fprintf(stderr, "Uploaded %s to %s/%s\n", local.c_str(), share.c_str(), target.c_str());
        }
    }

    ArmClient& arm = ctx.arm();
    std::string ws = workspace_path(arm, scope.group, *scope.workspace);
    if (!exists(arm, ws)) {
        ctx.progress("Creating workspace " + *scope.workspace);
        arm.create(ws, kApi, {{"location", ctx.location(string_field(project, "location"), scope.group)}});
    }
    std::string exp = experiment_path(arm, scope.group, *scope.workspace, scope.experiment);
    if (!exists(arm, exp)) {
        ctx.progress("Creating experiment " + scope.experiment);
        arm.create(exp, kApi, json::object());
    }
    const json cluster = project.contains("cluster") ? project["cluster"] : json();
    std::string cluster_name = cluster.is_string() ? cluster.get<std::string>() : required_text(cluster, "name", where + " cluster");
    ensure_cluster(ctx, scope, cluster, cluster_name, keys, where);

    json& props = body["properties"];
    props["cluster"] = {{"id", scope.cluster_id(arm, cluster_name)}};
    if (props.contains("mountVolumes")) patch_mount_volumes(props["mountVolumes"], keys);
    std::string job = f.name.empty() ? timestamp_name(string_field(job_spec, "namePrefix", "job")) : f.name;
    arm.create(scope.path(arm, job), kApi, body);
    ctx.end_progress();
    std::fprintf(stderr, "Job %s submitted to cluster %s; streaming its stdout\n", job.c_str(), cluster_name.c_str());

    // stdout.txt, or that of rank 0 (PyTorch, Caffe2) or of the master (distributed TensorFlow).
    json started = wait_for_job(ctx, scope, job, 1.0, true);
    if (!job_finished(started)) std::fprintf(stderr, "Job %s is running; its stdout:\n", job.c_str());
    stream_output_file(ctx, scope, job, "stdouterr", {"stdout.txt", "stdout-0.txt", "stdout-wk-0.txt"});
    json finished = wait_for_job(ctx, scope, job, 1.0);

    const json local = object_field(project, "download");
    std::string models = (base / string_field(local, "outputs", "models")).string();
    std::string logs = (base / string_field(local, "logs", "logs")).string();
    const json outputs = props.contains("outputDirectories") && props["outputDirectories"].is_array()
                             ? props["outputDirectories"] : json::array();
    for (const json& o : outputs) {
        std::string id = string_field(o, "id");
        if (id.empty()) continue;
        std::string into = outputs.size() == 1 ? models : models + "/" + id;
        size_t n = download_output_directory(ctx, scope, job, id, into);
        std::fprintf(stderr, "Downloaded %zu file(s) of output %s to %s\n", n, id.c_str(), into.c_str());
    }
    size_t n = download_output_directory(ctx, scope, job, "stdouterr", logs);
    std::fprintf(stderr, "Downloaded %zu log file(s) to %s\n", n, logs.c_str());

    if (!(project.contains("persistCluster") && project["persistCluster"] == true)) {
        arm.patch(cluster_path(arm, scope.group, *scope.workspace, cluster_name), kApi,
                  {{"properties", {{"scaleSettings", {{"manual", {{"targetNodeCount", 0}}}}}}}});
        std::fprintf(stderr, "Cluster %s resized to 0 nodes (persistCluster is false)\n", cluster_name.c_str());
    }
    int code = exit_status_of(finished);
    std::fprintf(stderr, "Job %s %s (exit status %d)\n", job.c_str(), execution_state(finished).c_str(), code);
    if (ctx.output_given()) ctx.print(az_view(finished));  // stdout holds the job's own output otherwise
    if (code != 0) throw CliError("", code);
}

}  // namespace

void add_job_submit_command(CLI::App* job, CommandContext& ctx) {
    auto f = std::make_shared<SubmitFlags>();
    CLI::App* c = job->add_subcommand("submit", "Upload, submit, stream, download: one job from a project.json.");
    c->add_option("-p,--project", f->project, "The project.json (default ./project.json)");
    c->add_option("-n,--name", f->name, "Name of the job (default: namePrefix_YYYYmmdd_HHMMSS, UTC)");
    c->callback([&ctx, f] { submit(ctx, *f); });
}

}  // namespace bai::cli
