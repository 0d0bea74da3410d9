// bai cluster ...: the 2018-05-01 commands in a workspace, and the flat 2017-09-01-preview ones
// when no workspace is given (nor set as a default), as the first az batchai releases had them.
#include "tools/bai/admin_user.h"
#include "tools/bai/cli_error.h"
#include "tools/bai/command_flags.h"
#include "tools/bai/commands.h"
#include "tools/bai/json_fields.h"
#include "tools/bai/json_file.h"
#include "tools/bai/resource_paths.h"
#include "tools/bai/storage_keys.h"

namespace bai::cli {
namespace {

using nlohmann::json;

// az's cluster table: the state is "deleting" while the cluster is being deleted.
json cluster_state_cell(const json& row) {
    return string_field(row, "provisioningState") == "deleting" ? json("deleting") : row.value("allocationState", json());
}

const std::vector<Column> kClusterTable = {
    {"Name", "name"},
    {"Resource Group", "resourceGroup"},
    {"Workspace", "", workspace_cell},
    {"VM Size", "vmSize"},
    {"State", "", cluster_state_cell},
    {"Idle", "nodeStateCounts.idleNodeCount"},
    {"Running", "nodeStateCounts.runningNodeCount"},
    {"Preparing", "nodeStateCounts.preparingNodeCount"},
    {"Leaving", "nodeStateCounts.leavingNodeCount"},
    {"Unusable", "nodeStateCounts.unusableNodeCount"}};

// Where a cluster command acts: a workspace (2018-05-01) or the group itself (preview).
struct Scope {
    std::string group;
    std::optional<std::string> workspace;
    std::string path(ArmClient& arm, const std::string& name) const {
        return workspace ? cluster_path(arm, group, *workspace, name) : preview_path(arm, group, "clusters", name);
    }
    std::string list_path(ArmClient& arm) const {
        return workspace ? workspace_path(arm, group, *workspace) + "/clusters" : batchai_path(arm, group) + "/clusters";
    }
    const char* api() const { return workspace ? kApi : kPreviewApi; }
};

struct ClusterFlags {
    std::string group, workspace, name, location;
    bool yes = false, no_wait = false;
    Scope scope(CommandContext& ctx) const {
        return {ctx.require(group, "group", "--resource-group/-g"), ctx.optional(workspace, "workspace")};
    }
};

struct ClusterCreateFlags : ClusterFlags {
    std::string vm_size, image, priority, config_file, subnet;
    std::optional<int> target, min_nodes, max_nodes;
    AdminFlags admin;
    std::string afs_name, afs_path = "afs", bfs_name, bfs_path = "bfs", nfs_name, nfs_path = "nfs";
    std::string setup_task, setup_task_output;
    StorageFlags storage;
};

// --image: the aliases of the az CLI, or publisher:offer:sku[:version].
json image_reference(const std::string& image) {
    if (image == "UbuntuLTS") return {{"publisher", "Canonical"}, {"offer", "UbuntuServer"}, {"sku", "16.04-LTS"}};
    if (image == "UbuntuDSVM") {
        return {{"publisher", "microsoft-ads"}, {"offer", "linux-data-science-vm-ubuntu"}, {"sku", "linuxdsvmubuntu"}};
    }
    std::vector<std::string> parts;
    size_t start = 0;
    for (size_t colon; (colon = image.find(':', start)) != std::string::npos; start = colon + 1) {
        parts.push_back(image.substr(start, colon - start));
    }
    parts.push_back(image.substr(start));
    if (parts.size() < 3 || parts.size() > 4) {
        throw CliError("--image: '" + image + "' is not UbuntuLTS, UbuntuDSVM or publisher:offer:sku[:version]",
                       kExitUsage);
    }
    json ref = {{"publisher", parts[0]}, {"offer", parts[1]}, {"sku", parts[2]}};
    if (parts.size() == 4) ref["version"] = parts[3];
    return ref;
}

// az's rule: -t alone is manual; --min and --max go together; equal min and max without a
// different -t are manual too; otherwise auto-scale starting at -t (default 0).
void apply_scale(json& props, const ClusterCreateFlags& f) {
    if (f.min_nodes.has_value() != f.max_nodes.has_value()) {
        throw CliError("You need to either provide both --min and --max node counts or not provide any", kExitUsage);
    }
    if (f.min_nodes && *f.min_nodes > *f.max_nodes) {
        throw CliError("Maximum nodes count (--max) must be greater or equal to minimum nodes count (--min)", kExitUsage);
    }
    if (!f.min_nodes) {
        if (f.target) props["scaleSettings"] = {{"manual", {{"targetNodeCount", *f.target}}}};
    } else if (*f.min_nodes == *f.max_nodes && (!f.target || *f.target == *f.min_nodes)) {
        props["scaleSettings"] = {{"manual", {{"targetNodeCount", *f.min_nodes}}}};
    } else {
        props["scaleSettings"] = {{"autoScale",
                                   {{"minimumNodeCount", *f.min_nodes},
                                    {"maximumNodeCount", *f.max_nodes},
                                    {"initialNodeCount", f.target.value_or(0)}}}};
    }
    if (!props.contains("scaleSettings")) {
        throw CliError("Please provide scale setting for the cluster via command line (-t, or --min and --max) or "
                       "configuration file",
                       kExitUsage);
    }
}

void apply_node_setup(json& props, const ClusterCreateFlags& f, CommandContext& ctx, const Scope& scope) {
    json& setup = props["nodeSetup"];
    if (!setup.is_object()) setup = json::object();
    StorageKeys keys(ctx, f.storage);
    json& volumes = setup["mountVolumes"];
    if (!volumes.is_object()) volumes = json::object();
    if (!f.afs_name.empty()) add_share_volume(volumes, keys, f.afs_name, f.afs_path);
    if (!f.bfs_name.empty()) add_container_volume(volumes, keys, f.bfs_name, f.bfs_path);
    if (!f.nfs_name.empty()) {
        if (!scope.workspace) throw CliError("--nfs needs a workspace (-w)", kExitUsage);
        bool id = f.nfs_name.rfind("/subscriptions/", 0) == 0;  // a name in the workspace, or an ARM id
        volumes["fileServers"].push_back(
            {{"fileServer", {{"id", id ? f.nfs_name : file_server_path(ctx.arm(), scope.group, *scope.workspace, f.nfs_name)}}},
             {"relativeMountPath", f.nfs_path},
             {"mountOptions", "rw"}});
    }
    patch_mount_volumes(volumes, keys);
    if (volumes.empty()) setup.erase("mountVolumes");
    if (!f.setup_task.empty()) {
        if (f.setup_task_output.empty()) {
            throw CliError("--setup-task-output must be given with --setup-task (where its stdout and stderr go)",
                           kExitUsage);
        }
        setup["setupTask"] = {{"commandLine", f.setup_task}, {"stdOutErrPathPrefix", f.setup_task_output}};
    }
    if (setup.empty()) props.erase("nodeSetup");
}

void add_cluster_create(CLI::App* group, CommandContext& ctx) {
    auto f = std::make_shared<ClusterCreateFlags>();
    CLI::App* c = group->add_subcommand("create", "Create a cluster.");
    add_group_flag(c, f->group);
    add_workspace_flag(c, f->workspace);
    c->add_option("-n,--name", f->name, "Name of the cluster")->required();
    add_location_flag(c, f->location);
    c->add_option("-f,--config-file,--config,-c", f->config_file, "A cluster.json (ClusterCreateParameters)");
    c->add_option("-s,--vm-size", f->vm_size, "VM size of the nodes, e.g. STANDARD_NC6");
    c->add_option("-t,--target", f->target, "Number of nodes (manual scale)");
    c->add_option("--min", f->min_nodes, "Minimum number of nodes (auto-scale when it differs from --max)");
    c->add_option("--max", f->max_nodes, "Maximum number of nodes");
    c->add_option("-i,--image", f->image, "UbuntuLTS, UbuntuDSVM or publisher:offer:sku[:version]");
    c->add_option("--vm-priority", f->priority, "dedicated or lowpriority")
        ->check(CLI::IsMember({"dedicated", "lowpriority"}, CLI::ignore_case));
    add_admin_flags(c, f->admin);
    c->add_option("--afs-name", f->afs_name, "Azure file share to mount on the nodes");
    c->add_option("--afs-mount-path", f->afs_path, "Where the share is mounted, under $AZ_BATCHAI_MOUNT_ROOT");
    c->add_option("--bfs-name", f->bfs_name, "Blob container to mount on the nodes");
    c->add_option("--bfs-mount-path", f->bfs_path, "Where the container is mounted, under $AZ_BATCHAI_MOUNT_ROOT");
    c->add_option("--nfs,--nfs-name", f->nfs_name, "File server of the workspace to mount on the nodes");
    c->add_option("--nfs-mount-path", f->nfs_path, "Where the file server is mounted, under $AZ_BATCHAI_MOUNT_ROOT");
    c->add_option("--setup-task", f->setup_task, "Command line run on each node when it starts");
    c->add_option("--setup-task-output", f->setup_task_output, "Where the setup task's stdout and stderr go");
    c->add_option("--storage-account-name", f->storage.account, "Storage account of --afs-name/--bfs-name");
    c->add_option("--storage-account-key", f->storage.key, "Its key (default: read from the account)");
    c->add_option("--subnet", f->subnet, "Resource id of a virtual network subnet");
    add_no_wait_flag(c, f->no_wait);
    c->callback([&ctx, f] {
        Scope scope = f->scope(ctx);
        json body = create_body(f->config_file, f->vm_size);
        json& props = body["properties"];
        apply_scale(props, *f);
        if (!f->image.empty()) props["virtualMachineConfiguration"] = {{"imageReference", image_reference(f->image)}};
        if (!f->priority.empty()) props["vmPriority"] = f->priority;
        if (!f->subnet.empty()) props["subnet"] = {{"id", f->subnet}};
        fill_admin_user(props["userAccountSettings"], f->admin);
        apply_node_setup(props, *f, ctx, scope);
        if (!scope.workspace) body["location"] = ctx.location(f->location, scope.group);
        json created = ctx.arm().create(scope.path(ctx.arm(), f->name), scope.api(), body, f->no_wait);
        ctx.print(az_view(created), kClusterTable);
    });
}

void add_scale_commands(CLI::App* group, CommandContext& ctx) {
    auto r = std::make_shared<ClusterCreateFlags>();
    CLI::App* c = group->add_subcommand("resize", "Resize a cluster to a number of nodes.");
    add_group_flag(c, r->group);
    add_workspace_flag(c, r->workspace);
    c->add_option("-n,--name", r->name, "Name of the cluster")->required();
    c->add_option("-t,--target", r->target, "Number of nodes")->required();
    c->callback([&ctx, r] {
        Scope scope = r->scope(ctx);
        json body = {{"properties", {{"scaleSettings", {{"manual", {{"targetNodeCount", *r->target}}}}}}}};
        ctx.print(az_view(ctx.arm().patch(scope.path(ctx.arm(), r->name), scope.api(), body)), kClusterTable);
    });

    auto a = std::make_shared<ClusterCreateFlags>();
    c = group->add_subcommand("auto-scale", "Make a cluster scale between --min and --max nodes.");
    add_group_flag(c, a->group);
    add_workspace_flag(c, a->workspace);
    c->add_option("-n,--name", a->name, "Name of the cluster")->required();
    c->add_option("--min", a->min_nodes, "Minimum number of nodes")->required();
    c->add_option("--max", a->max_nodes, "Maximum number of nodes")->required();
    c->callback([&ctx, a] {
        Scope scope = a->scope(ctx);
        if (*a->min_nodes > *a->max_nodes) throw CliError("--min must not be greater than --max", kExitUsage);
        json body = {{"properties",
                      {{"scaleSettings",
                        {{"autoScale", {{"minimumNodeCount", *a->min_nodes}, {"maximumNodeCount", *a->max_nodes}}}}}}}};
        ctx.print(az_view(ctx.arm().patch(scope.path(ctx.arm(), a->name), scope.api(), body)), kClusterTable);
    });
}

void add_cluster_read_commands(CLI::App* group, CommandContext& ctx) {
    auto l = std::make_shared<ClusterFlags>();
    CLI::App* c = group->add_subcommand("list", "List clusters.");
    add_group_flag(c, l->group);
    add_workspace_flag(c, l->workspace);
    c->callback([&ctx, l] {
        auto g = ctx.optional(l->group, "group");
        auto w = ctx.optional(l->workspace, "workspace");
        std::string path;
        if (g) {
            path = Scope{*g, w}.list_path(ctx.arm());
        } else if (!w) {
            path = "/subscriptions/" + ctx.arm().subscription() + "/providers/Microsoft.BatchAI/clusters";
        } else {
            throw CliError("the following argument is required: --resource-group/-g", kExitUsage);
        }
        ctx.print(az_view_list(ctx.arm().list(path, w ? kApi : kPreviewApi)), kClusterTable);
    });

    auto s = std::make_shared<ClusterFlags>();
    c = group->add_subcommand("show", "Show a cluster.");
    add_group_flag(c, s->group);
    add_workspace_flag(c, s->workspace);
    c->add_option("-n,--name", s->name, "Name of the cluster")->required();
    c->callback([&ctx, s] {
        Scope scope = s->scope(ctx);
        ctx.print(az_view(ctx.arm().get(scope.path(ctx.arm(), s->name), scope.api())), kClusterTable);
    });

    auto d = std::make_shared<ClusterFlags>();
    c = group->add_subcommand("delete", "Delete a cluster.");
    add_group_flag(c, d->group);
    add_workspace_flag(c, d->workspace);
    c->add_option("-n,--name", d->name, "Name of the cluster")->required();
    add_yes_flag(c, d->yes);
    add_no_wait_flag(c, d->no_wait);
    c->callback([&ctx, d] {
        Scope scope = d->scope(ctx);
        confirm_or_throw(d->yes);
        ctx.arm().delete_resource(scope.path(ctx.arm(), d->name), scope.api(), d->no_wait);
    });

    // `cluster node list -c NAME` (2018) and `cluster list-nodes -n NAME` (preview).
    auto n = std::make_shared<ClusterFlags>();
    CLI::App* node = group->add_subcommand("node", "The nodes of a cluster.");
    node->require_subcommand(1);
    c = node->add_subcommand("list", "List the nodes of a cluster and how to reach them.");
    add_group_flag(c, n->group);
    add_workspace_flag(c, n->workspace);
    c->add_option("-c,--cluster,-n,--name", n->name, "Name of the cluster")->required();
    auto list_nodes = [&ctx, n] {
        Scope scope = n->scope(ctx);
        ctx.print(ctx.arm().list(scope.path(ctx.arm(), n->name) + "/listRemoteLoginInformation", scope.api(), {}, "POST"),
                  kRemoteLoginTable);
    };
    c->callback(list_nodes);
    c = group->add_subcommand("list-nodes", "List the nodes of a cluster (the preview CLI's spelling).");
    add_group_flag(c, n->group);
    add_workspace_flag(c, n->workspace);
    c->add_option("-n,--name", n->name, "Name of the cluster")->required();
    c->callback(list_nodes);
}

}  // namespace

void add_cluster_commands(CLI::App& app, CommandContext& ctx) {
    CLI::App* group = app.add_subcommand("cluster", "Manage clusters.");
    group->require_subcommand(1);
    add_cluster_create(group, ctx);
    add_scale_commands(group, ctx);
    add_cluster_read_commands(group, ctx);
}

}  // namespace bai::cli
