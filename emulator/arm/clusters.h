// Microsoft.BatchAI 2018-05-01 clusters and file servers: create (long-running), update of the
// cluster's scale settings, get, list by workspace, delete, listRemoteLoginInformation.
#pragma once

#include "emulator/arm/arm_context.h"
#include "emulator/arm/router.h"

namespace bai::arm {

void add_cluster_routes(Router& router, ArmContext& ctx);
void add_file_server_routes(Router& router, ArmContext& ctx);

// A cluster given no subnet that mounts a file server (by its stored id) joins the file server's
// virtual network, as the service did: the first mounted file server's subnet becomes the cluster's.
void inherit_file_server_subnet(const ArmContext& ctx, nlohmann::json& properties);

// Applies a PATCH body's scaleSettings to a stored cluster and tells the engine.
std::optional<StoredResource> apply_cluster_update(ArmContext& ctx, const std::string& cluster_id,
                                                   const nlohmann::json& body);

}  // namespace bai::arm
