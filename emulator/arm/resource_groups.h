// Microsoft.Resources resource groups: create, update tags, get, check existence, list, and
// delete (a long-running operation that deletes everything in the group).
#pragma once

#include "emulator/arm/arm_context.h"
#include "emulator/arm/router.h"

namespace bai::arm {

void add_resource_group_routes(Router& router, ArmContext& ctx);

}  // namespace bai::arm
