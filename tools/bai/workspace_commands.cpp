// bai workspace ... and bai experiment ... (2018-05-01), and bai group ... (the resource groups
// the tutorials create with `az group`).
#include "tools/bai/command_flags.h"
#include "tools/bai/commands.h"
#include "tools/bai/resource_paths.h"

namespace bai::cli {
namespace {

using nlohmann::json;

const std::vector<Column> kWorkspaceTable = {
    {"Name", "name"}, {"Resource Group", "resourceGroup"}, {"Location", "location"}, {"State", "provisioningState"}};
const std::vector<Column> kExperimentTable = {
    {"Name", "name"}, {"Resource Group", "resourceGroup"}, {"Workspace", "", workspace_cell}};
const std::vector<Column> kGroupTable = {{"Name", "name"}, {"Location", "location"}, {"State", "properties.provisioningState"}};

struct WorkspaceFlags {
    std::string group, workspace, name, location;
    std::vector<std::string> tags;
    bool yes = false, no_wait = false;
};

json tags_of(const std::vector<std::string>& tags) {
    json out = json::object();
    for (const std::string& t : tags) {
        size_t eq = t.find('=');
        out[t.substr(0, eq)] = eq == std::string::npos ? "" : t.substr(eq + 1);
    }
    return out;
}

void add_workspace(CLI::App& app, CommandContext& ctx) {
    CLI::App* group = app.add_subcommand("workspace", "Manage workspaces.");
    group->require_subcommand(1);

    auto f = std::make_shared<WorkspaceFlags>();
    CLI::App* c = group->add_subcommand("create", "Create a workspace.");
    add_group_flag(c, f->group);
    c->add_option("-n,--name", f->name, "Name of the workspace")->required();
    add_location_flag(c, f->location);
    c->add_option("--tags", f->tags, "Space-separated tags: key[=value]");
    c->callback([&ctx, f] {
        std::string g = ctx.require(f->group, "group", "--resource-group/-g");
        json body = {{"location", ctx.location(f->location, g)}};
        if (!f->tags.empty()) body["tags"] = tags_of(f->tags);
        ctx.print(az_view(ctx.arm().create(workspace_path(ctx.arm(), g, f->name), kApi, body)), kWorkspaceTable);
    });

    auto l = std::make_shared<WorkspaceFlags>();
    c = group->add_subcommand("list", "List workspaces (of a resource group, else of the subscription).");
    add_group_flag(c, l->group);
    c->callback([&ctx, l] {
        auto g = ctx.optional(l->group, "group");
        std::string path = g ? batchai_path(ctx.arm(), *g) + "/workspaces"
                             : "/subscriptions/" + ctx.arm().subscription() + "/providers/Microsoft.BatchAI/workspaces";
        ctx.print(az_view_list(ctx.arm().list(path, kApi)), kWorkspaceTable);
    });

    auto s = std::make_shared<WorkspaceFlags>();
    c = group->add_subcommand("show", "Show a workspace.");
    add_group_flag(c, s->group);
    c->add_option("-n,--name", s->name, "Name of the workspace")->required();
    c->callback([&ctx, s] {
        std::string g = ctx.require(s->group, "group", "--resource-group/-g");
        ctx.print(az_view(ctx.arm().get(workspace_path(ctx.arm(), g, s->name), kApi)), kWorkspaceTable);
    });

    auto d = std::make_shared<WorkspaceFlags>();
    c = group->add_subcommand("delete", "Delete a workspace and everything in it.");
    add_group_flag(c, d->group);
    c->add_option("-n,--name", d->name, "Name of the workspace")->required();
    add_yes_flag(c, d->yes);
    add_no_wait_flag(c, d->no_wait);
    c->callback([&ctx, d] {
        std::string g = ctx.require(d->group, "group", "--resource-group/-g");
        confirm_or_throw(d->yes);
        ctx.arm().delete_resource(workspace_path(ctx.arm(), g, d->name), kApi, d->no_wait);
    });
}

void add_experiment(CLI::App& app, CommandContext& ctx) {
    CLI::App* group = app.add_subcommand("experiment", "Manage experiments.");
    group->require_subcommand(1);

    auto f = std::make_shared<WorkspaceFlags>();
    CLI::App* c = group->add_subcommand("create", "Create an experiment.");
    add_group_flag(c, f->group);
    add_workspace_flag(c, f->workspace);
    c->add_option("-n,--name", f->name, "Name of the experiment")->required();
    c->callback([&ctx, f] {
        std::string g = ctx.require(f->group, "group", "--resource-group/-g");
        std::string w = ctx.require(f->workspace, "workspace", "--workspace/-w");
        ctx.print(az_view(ctx.arm().create(experiment_path(ctx.arm(), g, w, f->name), kApi, json::object())),
                  kExperimentTable);
    });

    auto l = std::make_shared<WorkspaceFlags>();
    c = group->add_subcommand("list", "List the experiments of a workspace.");
    add_group_flag(c, l->group);
    add_workspace_flag(c, l->workspace);
    c->callback([&ctx, l] {
        std::string g = ctx.require(l->group, "group", "--resource-group/-g");
        std::string w = ctx.require(l->workspace, "workspace", "--workspace/-w");
        ctx.print(az_view_list(ctx.arm().list(workspace_path(ctx.arm(), g, w) + "/experiments", kApi)),
                  kExperimentTable);
    });

    auto s = std::make_shared<WorkspaceFlags>();
    c = group->add_subcommand("show", "Show an experiment.");
    add_group_flag(c, s->group);
    add_workspace_flag(c, s->workspace);
    c->add_option("-n,--name", s->name, "Name of the experiment")->required();
    c->callback([&ctx, s] {
        std::string g = ctx.require(s->group, "group", "--resource-group/-g");
        std::string w = ctx.require(s->workspace, "workspace", "--workspace/-w");
        ctx.print(az_view(ctx.arm().get(experiment_path(ctx.arm(), g, w, s->name), kApi)), kExperimentTable);
    });

    auto d = std::make_shared<WorkspaceFlags>();
    c = group->add_subcommand("delete", "Delete an experiment and its jobs.");
    add_group_flag(c, d->group);
    add_workspace_flag(c, d->workspace);
    c->add_option("-n,--name", d->name, "Name of the experiment")->required();
    add_yes_flag(c, d->yes);
    add_no_wait_flag(c, d->no_wait);
    c->callback([&ctx, d] {
        std::string g = ctx.require(d->group, "group", "--resource-group/-g");
        std::string w = ctx.require(d->workspace, "workspace", "--workspace/-w");
        confirm_or_throw(d->yes);
        ctx.arm().delete_resource(experiment_path(ctx.arm(), g, w, d->name), kApi, d->no_wait);
    });
}

void add_group(CLI::App& app, CommandContext& ctx) {
    CLI::App* group = app.add_subcommand("group", "Manage resource groups (what `az group` does, against the emulator).");
    group->require_subcommand(1);

    auto f = std::make_shared<WorkspaceFlags>();
    CLI::App* c = group->add_subcommand("create", "Create or update a resource group.");
    c->add_option("-n,--name,-g,--resource-group", f->name, "Name of the resource group")->required();
    c->add_option("-l,--location", f->location, "Location")->required();
    c->callback([&ctx, f] {
        json body = {{"location", f->location}};
        ctx.print(ctx.arm().create(group_path(ctx.arm(), f->name), "2018-05-01", body), kGroupTable);
    });

    auto s = std::make_shared<WorkspaceFlags>();
    c = group->add_subcommand("show", "Show a resource group.");
    c->add_option("-n,--name,-g,--resource-group", s->name, "Name of the resource group")->required();
    c->callback([&ctx, s] { ctx.print(ctx.arm().get(group_path(ctx.arm(), s->name), "2018-05-01"), kGroupTable); });

    c = group->add_subcommand("list", "List resource groups.");
    c->callback([&ctx] {
        ctx.print(ctx.arm().list("/subscriptions/" + ctx.arm().subscription() + "/resourcegroups", "2018-05-01"),
                  kGroupTable);
    });

    auto d = std::make_shared<WorkspaceFlags>();
    c = group->add_subcommand("delete", "Delete a resource group and everything in it.");
    c->add_option("-n,--name,-g,--resource-group", d->name, "Name of the resource group")->required();
    add_yes_flag(c, d->yes);
    add_no_wait_flag(c, d->no_wait);
    c->callback([&ctx, d] {
        confirm_or_throw(d->yes);
        ctx.arm().delete_resource(group_path(ctx.arm(), d->name), "2018-05-01", d->no_wait);
    });
}

}  // namespace

void add_workspace_commands(CLI::App& app, CommandContext& ctx) {
    add_workspace(app, ctx);
    add_experiment(app, ctx);
    add_group(app, ctx);
}

}  // namespace bai::cli
