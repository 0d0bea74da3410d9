// Microsoft.BatchAI 2017-09-01-preview and 2018-03-01: flat clusters, jobs and file servers in a
// resource group. They are stored on the 2018-05-01 model, in workspace migrated-<location> and
// experiment "migrated" (as the service migrated them), so every API version sees them; this
// file converts bodies in and views out (flat ids, int priority, each version's fields).
#pragma once

#include "emulator/arm/arm_context.h"
#include "emulator/arm/router.h"

namespace bai::arm {

void add_preview_routes(Router& router, ArmContext& ctx);

// Whether a stored job was made through the 2017-09-01-preview API, whose service wrote the
// job's stdout and stderr straight into {stdOutErrPathPrefix}/{segment}: no stdouterr folder, no
// execution.log there.
bool uses_preview_output_layout(const nlohmann::json& job);

// "migrated-<location>" with the location folded as ARM folds it ("East US" -> "eastus").
std::string migrated_workspace_name(const std::string& location);

}  // namespace bai::arm
