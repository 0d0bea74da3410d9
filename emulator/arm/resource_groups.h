// Microsoft.Resources resource groups: create, update tags, get, check existence, list, and
// delete (a long-running operation that deletes everything in the group).
#pragma once

#include <string>

#include "emulator/arm/arm_context.h"
#include "emulator/arm/router.h"

namespace bai::arm {

void add_resource_group_routes(Router& router, ArmContext& ctx);

// The subscription's own record (id "/subscriptions/S"), made with its first resource group:
// from then on it is one ARM knows (SubscriptionNotFound before), even with no group left in it.
void remember_subscription(ArmContext& ctx, const std::string& id);

// A subscription ARM knows gets its record with its first group; data directories older than
// those records get one at start for every subscription that has a group.
void remember_subscriptions(ArmContext& ctx);

}  // namespace bai::arm
