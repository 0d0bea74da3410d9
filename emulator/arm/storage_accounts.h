// Microsoft.Storage storage accounts: create (with generated keys, registered with the Blob and
// File services at once), get, list, listKeys, regenerateKey, delete, checkNameAvailability.
// Names are unique across the emulator, as they are across Azure.
#pragma once

#include "emulator/arm/arm_context.h"
#include "emulator/arm/router.h"

namespace bai::arm {

void add_storage_account_routes(Router& router, ArmContext& ctx);
// Start-up: the accounts created through ARM in earlier runs, back into the registry.
void register_stored_accounts(ArmContext& ctx);
// The Account of a stored storage-account document.
storage::Account account_of(const StoredResource& stored);

}  // namespace bai::arm
