// Microsoft.BatchAI 2017-09-01-preview: flat clusters, jobs and file servers in a resource
// group. They are stored on the 2018-05-01 model, in workspace migrated-<location> and
// experiment "migrated" (as the service migrated them), so both API versions see them; this
// file converts bodies in and views out (flat ids, capitalised states, int priority).
#pragma once

#include "emulator/arm/arm_context.h"
#include "emulator/arm/router.h"

namespace bai::arm {

void add_preview_routes(Router& router, ArmContext& ctx);

// "migrated-<location>" with the location folded as ARM folds it ("East US" -> "eastus").
std::string migrated_workspace_name(const std::string& location);

}  // namespace bai::arm
