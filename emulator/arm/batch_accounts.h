// Microsoft.Batch accounts (`az batch account`): create, update, get, list, delete, keys (list,
// regenerate), name availability and the location's quota. An account made here is one the
// Batch endpoint knows at once, by its keys (batch::BatchAccountRegistry); its accountEndpoint
// names that endpoint.
#pragma once

#include "emulator/arm/arm_context.h"
#include "emulator/arm/router.h"

namespace bai::arm {

void add_batch_account_routes(Router& router, ArmContext& ctx);
// At start: the accounts ARM holds join the Batch endpoint's registry.
void register_stored_batch_accounts(ArmContext& ctx);
// An account gone with its group leaves the Batch endpoint's registry.
void forget_batch_account(ArmContext& ctx, const std::string& name);

}  // namespace bai::arm
