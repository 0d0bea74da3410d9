// Microsoft.Resources providers: list, get, register and unregister the namespaces the emulator
// serves (Microsoft.BatchAI, Microsoft.Batch, Microsoft.Storage, Microsoft.Network,
// Microsoft.Resources), each with its resource types, locations and api-versions. Registering
// goes Registering -> Registered (unregistering Unregistering -> Unregistered) after the
// emulator's long-running-operation delay, as a subscription's registration does in the cloud.
#pragma once

#include "emulator/arm/arm_context.h"
#include "emulator/arm/operations.h"
#include "emulator/arm/router.h"

namespace bai::arm {

void add_provider_registration_routes(Router& router, ArmContext& ctx);
// Completes a "register" or "unregister" operation: the namespace's state becomes final.
void complete_provider_registration(ArmContext& ctx, const Operation& op);

}  // namespace bai::arm
