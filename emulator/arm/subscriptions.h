// Microsoft.Resources subscriptions, tenants and locations: what `az login` and `az account`
// read. The emulator's default subscription is known from the start; another becomes known with
// its first resource group (resource_groups.h). All belong to the emulator's one tenant.
#pragma once

#include <string>

#include "emulator/arm/arm_context.h"
#include "emulator/arm/router.h"

namespace bai::arm {

// The subscription's id as it was first given (ids compare without case), or 404
// SubscriptionNotFound when ARM does not know it.
std::string require_known_subscription(ArmContext& ctx, const std::string& id);

// Also gives the default subscription its record (resource_groups.h) when it has none.
void add_subscription_routes(Router& router, ArmContext& ctx);

}  // namespace bai::arm
