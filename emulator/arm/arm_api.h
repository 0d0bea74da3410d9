// The ARM endpoint: Microsoft.BatchAI (2018-05-01 and 2017-09-01-preview), resource groups and
// storage accounts, on one router behind the HTTPS listener.
#pragma once

#include <httplib.h>

#include "common/http/routes.h"

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "common/db/database.h"
#include "emulator/arm/arm_context.h"
#include "emulator/arm/router.h"
#include "emulator/identity/token_service.h"
#include "fake_storage/accounts/account_registry.h"

namespace bai::arm {

struct ArmEndpoints {
    std::string arm;  // "https://127.0.0.1:10443"
    std::string blob;
    std::string file;
    std::string batch;
};

class ArmApi {
public:
    using EngineFactory = std::function<std::unique_ptr<ComputeEngine>(ResourceStore&)>;
    // `lro_delay`: how long a long-running operation stays InProgress. `engine`: what runs the
    // clusters and jobs (by default none: jobs stay queued).
    ArmApi(db::Database& db, storage::AccountRegistry& accounts, storage::FileStore& files, storage::BlobStore& blobs,
           batch::BatchAccountRegistry& batch_accounts, std::chrono::milliseconds lro_delay,
           const EngineFactory& engine = {});
    ~ArmApi();
    static void migrate(db::Database& db);

    // --strict-auth: bearer tokens must be `tokens`' (bearer_token.h). Before serve().
    void require_signed_tokens(const identity::TokenService& tokens) { strict_tokens_ = &tokens; }
    // Once the ports are known, before serving: registers the stored storage accounts and
    // routes every request the server has no other route for to the ARM router.
    void serve(http::Routes& server, const ArmEndpoints& endpoints);
    // Stops the operations worker (what is still in progress completes after the next start).
    void stop();
    // No long-running operation is waiting to complete or completing (scenarios settle on it).
    bool operations_idle() const;
    // Waits until operations_idle() or `until`; whether idle.
    bool wait_operations_idle(std::chrono::steady_clock::time_point until) const;

    ResourceStore& store() { return *store_; }
    ComputeEngine& engine() { return *engine_; }

private:
    std::unique_ptr<ResourceStore> store_;
    std::unique_ptr<OperationTracker> operations_;
    std::unique_ptr<ComputeEngine> engine_;
    storage::AccountRegistry& accounts_;
    storage::FileStore& files_;
    storage::BlobStore& blobs_;
    batch::BatchAccountRegistry& batch_accounts_;
    std::unique_ptr<ArmContext> context_;
    std::unique_ptr<Router> router_;
    const identity::TokenService* strict_tokens_ = nullptr;
};

}  // namespace bai::arm
