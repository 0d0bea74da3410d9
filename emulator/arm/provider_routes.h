// The provider-level routes: Operations_List (generated from the route table), Usages_List,
// and the polling URLs of long-running operations of every provider.
#pragma once

#include "emulator/arm/arm_context.h"
#include "emulator/arm/router.h"

namespace bai::arm {

void add_provider_routes(Router& router, ArmContext& ctx);

}  // namespace bai::arm
