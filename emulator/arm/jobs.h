// Microsoft.BatchAI 2018-05-01 jobs: create (validated, defaults filled, a long-running
// operation), get, list by experiment, terminate, delete, listRemoteLoginInformation and
// listOutputFiles.
#pragma once

#include "emulator/arm/arm_context.h"
#include "emulator/arm/router.h"

namespace bai::arm {

void add_job_routes(Router& router, ArmContext& ctx);

// 400 ClusterNotFound (target properties.cluster.id) unless the job's cluster exists.
void require_job_cluster(const ArmContext& ctx, const nlohmann::json& properties);

}  // namespace bai::arm
