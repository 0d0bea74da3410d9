#include "emulator/arm/arm_api.h"

#include "emulator/arm/batch_accounts.h"
#include "emulator/arm/blob_services.h"
#include "emulator/arm/file_services.h"
#include "emulator/arm/batchai_common.h"
#include "emulator/arm/bearer_token.h"
#include "emulator/arm/clusters.h"
#include "emulator/arm/jobs.h"
#include "emulator/arm/preview_api.h"
#include "emulator/arm/provider_routes.h"
#include "emulator/arm/providers.h"
#include "emulator/arm/queue_only_engine.h"
#include "emulator/arm/resource_groups.h"
#include "emulator/arm/storage_accounts.h"
#include "emulator/arm/subscriptions.h"
#include "emulator/arm/virtual_networks.h"
#include "emulator/arm/workspaces.h"

namespace bai::arm {

ArmApi::ArmApi(db::Database& db, storage::AccountRegistry& accounts, storage::FileStore& files,
               storage::BlobStore& blobs, batch::BatchAccountRegistry& batch_accounts, std::chrono::milliseconds lro_delay,
               const EngineFactory& engine)
    : store_(std::make_unique<ResourceStore>(db)),
      operations_(std::make_unique<OperationTracker>(db, lro_delay)),
      engine_(engine ? engine(*store_) : std::make_unique<QueueOnlyEngine>(*store_)),
      accounts_(accounts),
      files_(files),
      blobs_(blobs),
      batch_accounts_(batch_accounts) {}

ArmApi::~ArmApi() { stop(); }

void ArmApi::migrate(db::Database& db) {
    ResourceStore::migrate(db);
    OperationTracker::migrate(db);
}

void ArmApi::serve(http::Routes& server, const ArmEndpoints& endpoints) {
    context_ = std::unique_ptr<ArmContext>(
        new ArmContext{*store_, *operations_, *engine_, accounts_, endpoints.blob, endpoints.file, files_, blobs_,
                       batch_accounts_, endpoints.batch});
    register_stored_accounts(*context_);
    register_stored_batch_accounts(*context_);
    remember_subscriptions(*context_);
    router_ = std::make_unique<Router>(endpoints.arm);
    if (strict_tokens_ != nullptr) {
        const identity::TokenService* tokens = strict_tokens_;
        router_->set_token_check([tokens](const std::string& token) { check_arm_token(*tokens, token); });
    }
    add_provider_routes(*router_, *context_);
    add_subscription_routes(*router_, *context_);
    add_provider_registration_routes(*router_, *context_);
    add_resource_group_routes(*router_, *context_);
    add_storage_account_routes(*router_, *context_);
    add_blob_service_routes(*router_, *context_);
    add_file_service_routes(*router_, *context_);
    add_batch_account_routes(*router_, *context_);
    add_virtual_network_routes(*router_, *context_);
    add_workspace_routes(*router_, *context_);
    add_cluster_routes(*router_, *context_);
    add_file_server_routes(*router_, *context_);
    add_job_routes(*router_, *context_);
    add_preview_routes(*router_, *context_);
    operations_->start([this](const Operation& op) { complete_operation(*context_, op); });

    auto dispatch = [this](const httplib::Request& req, httplib::Response& res) { router_->dispatch(req, res); };
    server.Get(".*", dispatch);
    server.Put(".*", dispatch);
    server.Post(".*", dispatch);
    server.Patch(".*", dispatch);
    server.Delete(".*", dispatch);
}

void ArmApi::stop() {
    if (operations_) operations_->stop();
}

bool ArmApi::operations_idle() const { return !operations_ || operations_->idle(); }

bool ArmApi::wait_operations_idle(std::chrono::steady_clock::time_point until) const {
    return !operations_ || operations_->wait_idle(until);
}

}  // namespace bai::arm
