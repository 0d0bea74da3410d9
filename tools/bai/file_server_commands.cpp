// bai file-server create/list/show/delete: in a workspace (2018-05-01), or flat in the group
// (2017-09-01-preview) when no workspace is given.
#include "tools/bai/admin_user.h"
#include "tools/bai/cli_error.h"
#include "tools/bai/command_flags.h"
#include "tools/bai/commands.h"
#include "tools/bai/json_fields.h"
#include "tools/bai/json_file.h"
#include "tools/bai/resource_paths.h"

namespace bai::cli {
namespace {

using nlohmann::json;

// az's "2 x 10 Gb".
json disks_cell(const json& row) {
    const json& disks = object_field(row, "dataDisks");
    auto count = integer_field(disks, "diskCount");
    auto size = integer_field(disks, "diskSizeInGB");
    if (!count || !size) return nullptr;
    return std::to_string(*count) + " x " + std::to_string(*size) + " Gb";
}

const std::vector<Column> kFileServerTable = {{"Name", "name"},
                                              {"Resource Group", "resourceGroup"},
                                              {"Size", "vmSize"},
                                              {"Disks", "", disks_cell},
                                              {"Public IP", "mountSettings.fileServerPublicIp"},
                                              {"Internal IP", "mountSettings.fileServerInternalIp"},
                                              {"Mount Point", "mountSettings.mountPoint"}};

struct FileServerFlags {
    std::string group, workspace, name, location;
    std::string vm_size, storage_sku = "Premium_LRS", caching_type, config_file, subnet;
    std::optional<int> disk_count, disk_size;
    AdminFlags admin;
    bool yes = false, no_wait = false;

    std::string group_name(CommandContext& ctx) const { return ctx.require(group, "group", "--resource-group/-g"); }
    std::optional<std::string> workspace_name(CommandContext& ctx) const { return ctx.optional(workspace, "workspace"); }
    std::string path(CommandContext& ctx) const {
        std::string g = group_name(ctx);
        auto w = workspace_name(ctx);
        return w ? file_server_path(ctx.arm(), g, *w, name) : preview_path(ctx.arm(), g, "fileServers", name);
    }
    const char* api(CommandContext& ctx) const { return workspace_name(ctx) ? kApi : kPreviewApi; }
};

void add_name_flags(CLI::App* c, FileServerFlags& f) {
    add_group_flag(c, f.group);
    add_workspace_flag(c, f.workspace);
    c->add_option("-n,--name", f.name, "Name of the file server")->required();
}

void add_file_server_create(CLI::App* group, CommandContext& ctx) {
    auto f = std::make_shared<FileServerFlags>();
    CLI::App* c = group->add_subcommand("create", "Create an NFS file server.");
    add_name_flags(c, *f);
    add_location_flag(c, f->location);
    c->add_option("-f,--config-file,--config", f->config_file, "A file-server.json (FileServerCreateParameters)");
    c->add_option("-s,--vm-size", f->vm_size, "VM size of the file server");
    c->add_option("--disk-count", f->disk_count, "Number of data disks")->check(CLI::Range(1, 64));
    c->add_option("--disk-size", f->disk_size, "Size of each disk in GB")->check(CLI::Range(1, 4095));
    c->add_option("--storage-sku", f->storage_sku, "Premium_LRS or Standard_LRS (default Premium_LRS)")
        ->check(CLI::IsMember({"Premium_LRS", "Standard_LRS"}));
    c->add_option("--caching-type", f->caching_type, "none, readonly or readwrite")
        ->check(CLI::IsMember({"none", "readonly", "readwrite"}));
    add_admin_flags(c, f->admin);
    c->add_option("--subnet", f->subnet, "Resource id of a virtual network subnet");
    add_no_wait_flag(c, f->no_wait);
    c->callback([&ctx, f] {
        json body = create_body(f->config_file, f->vm_size);
        json& props = body["properties"];
        json& disks = props["dataDisks"];
        if (!disks.is_object()) disks = json::object();
        if (f->disk_count) disks["diskCount"] = *f->disk_count;
        if (f->disk_size) disks["diskSizeInGB"] = *f->disk_size;
        if (!disks.contains("storageAccountType")) disks["storageAccountType"] = f->storage_sku;
        if (!f->caching_type.empty()) disks["cachingType"] = f->caching_type;
        if (!disks.contains("diskCount") || !disks.contains("diskSizeInGB")) {
            throw CliError("the following arguments are required: --disk-count, --disk-size", kExitUsage);
        }
        fill_admin_user(props["sshConfiguration"]["userAccountSettings"], f->admin);
        if (!f->subnet.empty()) props["subnet"] = {{"id", f->subnet}};
        if (!f->workspace_name(ctx)) body["location"] = ctx.location(f->location, f->group_name(ctx));
        ctx.print(az_view(ctx.arm().create(f->path(ctx), f->api(ctx), body, f->no_wait)), kFileServerTable);
    });
}

}  // namespace

void add_file_server_commands(CLI::App& app, CommandContext& ctx) {
    CLI::App* group = app.add_subcommand("file-server", "Manage NFS file servers.");
    group->require_subcommand(1);
    add_file_server_create(group, ctx);

    auto l = std::make_shared<FileServerFlags>();
    CLI::App* c = group->add_subcommand("list", "List file servers.");
    add_group_flag(c, l->group);
    add_workspace_flag(c, l->workspace);
    c->callback([&ctx, l] {
        std::string g = l->group_name(ctx);
        auto w = l->workspace_name(ctx);
        std::string path = w ? workspace_path(ctx.arm(), g, *w) + "/fileServers" : batchai_path(ctx.arm(), g) + "/fileServers";
        ctx.print(az_view_list(ctx.arm().list(path, l->api(ctx))), kFileServerTable);
    });

    auto s = std::make_shared<FileServerFlags>();
    c = group->add_subcommand("show", "Show a file server.");
    add_name_flags(c, *s);
    c->callback([&ctx, s] { ctx.print(az_view(ctx.arm().get(s->path(ctx), s->api(ctx))), kFileServerTable); });

    auto d = std::make_shared<FileServerFlags>();
    c = group->add_subcommand("delete", "Delete a file server.");
    add_name_flags(c, *d);
    add_yes_flag(c, d->yes);
    add_no_wait_flag(c, d->no_wait);
    c->callback([&ctx, d] {
        confirm_or_throw(d->yes);
        ctx.arm().delete_resource(d->path(ctx), d->api(ctx), d->no_wait);
    });
}

}  // namespace bai::cli
