// Microsoft.Storage storage accounts: create (with generated keys, registered with the Blob and
// File services at once), get, list, listKeys, regenerateKey, delete, checkNameAvailability.
// Names are unique across the emulator, as they are across Azure.
#pragma once

#include <string>

#include "emulator/arm/arm_context.h"
#include "emulator/arm/router.h"

namespace bai::arm {

void add_storage_account_routes(Router& router, ArmContext& ctx);
// Start-up: the accounts created through ARM in earlier runs, back into the registry.
void register_stored_accounts(ArmContext& ctx);
// An account deleted (itself or with its resource group): out of the registry, and its containers
// and shares with it, as in the cloud (a new account of that name starts empty).
void forget_storage_account(ArmContext& ctx, const std::string& account);
// The Account of a stored storage-account document.
storage::Account account_of(const StoredResource& stored);

}  // namespace bai::arm
