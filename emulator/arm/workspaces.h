// Microsoft.BatchAI 2018-05-01 workspaces and experiments. Their PUT answers 200 with the
// resource at once, as the service did; their DELETE is a long-running operation that deletes
// what they hold.
#pragma once

#include "emulator/arm/arm_context.h"
#include "emulator/arm/router.h"

namespace bai::arm {

void add_workspace_routes(Router& router, ArmContext& ctx);

// 404 WorkspaceNotFound / ExperimentNotFound (after the group's check).
void check_workspace(const ArmContext& ctx, const Params& p);
StoredResource require_workspace(const ArmContext& ctx, const Params& p);
void check_experiment(const ArmContext& ctx, const Params& p);
StoredResource require_experiment(const ArmContext& ctx, const Params& p);
// Creates workspace `name` in the group if missing (the preview API's migrated-<location>).
StoredResource ensure_workspace(ArmContext& ctx, const Params& p, const std::string& name, const std::string& location);
StoredResource ensure_experiment(ArmContext& ctx, const std::string& workspace_id, const std::string& name);

}  // namespace bai::arm
