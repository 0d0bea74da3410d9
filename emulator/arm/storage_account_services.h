// What the storage account's service sub-resources (blobServices/default, fileServices/default)
// share: the account's resource id and the account they are reached under.
#pragma once

#include <optional>
#include <string>

#include "emulator/arm/arm_context.h"
#include "emulator/arm/router.h"

namespace bai::arm {

// /subscriptions/S/resourceGroups/G/providers/Microsoft.Storage/storageAccounts/NAME
std::string storage_account_id(const Params& p);

// The account's ARM document, if it was made through ARM. The accounts the emulator is started
// with (--account, AZURITE_ACCOUNTS, devstoreaccount1) have none: their services are reached under
// any resource group that exists (a development convenience; every cloud account has one).
// Otherwise 404 ResourceNotFound, as the gateway answers.
std::optional<StoredResource> require_service_account(const ArmContext& ctx, const Params& p);

}  // namespace bai::arm
