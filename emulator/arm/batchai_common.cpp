#include "emulator/arm/batchai_common.h"

#include "emulator/arm/batch_accounts.h"
#include "emulator/arm/providers.h"
#include "emulator/arm/resource_defaults.h"
#include "emulator/arm/resource_ids.h"
#include "emulator/arm/resource_view.h"
#include "emulator/arm/storage_accounts.h"
#include "emulator/arm/virtual_networks.h"

namespace bai::arm {
namespace {

void complete_create(ArmContext& ctx, const Operation& op) {
    std::optional<StoredResource> done = ctx.store.update(op.resource_id, [](nlohmann::json& r) {
        if (r["properties"].value("provisioningState", "") != "creating") return false;
        set_provisioning_state(r["properties"], "succeeded");
        return true;
    });
    if (!done) return;
    if (done->type == kind::kJob) ctx.engine.job_created(op.resource_id);
    if (done->type == kind::kCluster) ctx.engine.cluster_created(op.resource_id);
}

void complete_delete(ArmContext& ctx, const Operation& op) {
    for (const StoredResource& removed : ctx.store.remove_tree(op.resource_id)) {
        if (removed.type == kind::kJob) ctx.engine.job_deleted(removed);
        if (removed.type == kind::kCluster) ctx.engine.cluster_deleted(removed);
        if (removed.type == kind::kFileServer) ctx.engine.file_server_deleted(removed);
        if (removed.type == kind::kStorageAccount) forget_storage_account(ctx, removed.body["name"].get<std::string>());
        if (removed.type == kind::kBatchAccount) forget_batch_account(ctx, removed.body["name"].get<std::string>());
    }
}

}  // namespace

void start_operation(ArmContext& ctx, const ArmRequest& req, httplib::Response& res, const OperationTarget& target) {
    Operation op;
    op.kind = target.kind;
    op.resource_id = target.resource_id;
    op.resource_ref = target.resource_ref;
    op.provider = "Microsoft.BatchAI";
    op.subscription = target.subscription;
    op.location = target.location;
    op.api_version = req.api_version();
    OperationTracker::send_accepted(res, ctx.operations.begin(op), req.base_url);
}

void start_terminate(ArmContext& ctx, const ArmRequest& req, httplib::Response& res, const StoredResource& job,
                     const OperationTarget& target) {
    const std::string state = job.body["properties"].value("executionState", "");
    if (state == "succeeded" || state == "failed") {
        res.status = 200;
        return;
    }
    start_operation(ctx, req, res, target);
}

void start_delete(ArmContext& ctx, const ArmRequest& req, httplib::Response& res, const OperationTarget& target) {
    ctx.store.atomically([&] {
        ctx.store.update(target.resource_id, [](nlohmann::json& r) {
            set_provisioning_state(r["properties"], "deleting");
            return true;
        });
        start_operation(ctx, req, res, target);
    });
}

void send_list(const ArmRequest& req, httplib::Response& res, const Page& page, const View& view) {
    nlohmann::json items = nlohmann::json::array();
    for (const StoredResource& r : page.items) items.push_back(view(r));
    send_page(res, req, items, page.next_after);
}

void complete_operation(ArmContext& ctx, const Operation& op) {
    if (op.kind == "register" || op.kind == "unregister") return complete_provider_registration(ctx, op);
    if (op.provider == "Microsoft.Network") return complete_network_operation(ctx, op);
    if (op.kind == "create") return complete_create(ctx, op);
    if (op.kind == "delete") return complete_delete(ctx, op);
    if (op.kind == "terminate") return ctx.engine.job_terminate(op.resource_id);
}

}  // namespace bai::arm
