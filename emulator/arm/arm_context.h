// What the ARM handlers share: the resource documents, the operations, the job engine, the
// storage accounts, and the storage endpoints that storage accounts advertise.
#pragma once

#include <string>

#include "emulator/arm/compute_engine.h"
#include "emulator/arm/operations.h"
#include "emulator/arm/resource_store.h"
#include "emulator/batch/batch_account.h"
#include "fake_storage/accounts/account_registry.h"
#include "fake_storage/engine/blob_store.h"
#include "fake_storage/engine/file_store.h"

namespace bai::arm {

struct ArmContext {
    ResourceStore& store;
    OperationTracker& operations;
    ComputeEngine& engine;
    storage::AccountRegistry& accounts;
    std::string blob_endpoint;  // "http://127.0.0.1:10000"
    std::string file_endpoint;
    storage::FileStore& files;  // for listOutputFiles
    storage::BlobStore& blobs;
    batch::BatchAccountRegistry& batch_accounts;  // what Microsoft.Batch accounts add to the Batch endpoint
    std::string batch_endpoint;                   // "http://127.0.0.1:10447"
};

}  // namespace bai::arm
