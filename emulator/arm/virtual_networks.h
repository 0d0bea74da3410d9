// Microsoft.Network virtual networks and their subnets, as far as Batch AI uses them: a cluster or
// a file server names a subnet (`subnet.id`), and clients make the network first (the Java SDK's
// tests do). Create and update (201/200 with Azure-AsyncOperation, "Updating" until the operation
// ends), get, list, delete; a subnet's get and list. Nothing is routed: the emulated nodes keep
// their loopback addresses whatever subnet their cluster names.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "emulator/arm/arm_context.h"
#include "emulator/arm/operations.h"
#include "emulator/arm/router.h"

namespace bai::arm {

void add_virtual_network_routes(Router& router, ArmContext& ctx);

// A network's PUT body checked as the Network provider checks it (a location; address prefixes
// that are CIDR prefixes; subnets with unique names inside the address space, none overlapping
// another), 400 naming the field; what is stored of it.
struct CheckedNetwork {
    std::string location;
    nlohmann::json tags;
    nlohmann::json properties;  // subnets with their ids under `id`
};
CheckedNetwork check_network_body(const nlohmann::json& body, const std::string& id);
// The end of a Microsoft.Network operation: the network (and its subnets) "Succeeded", or gone.
void complete_network_operation(ArmContext& ctx, const Operation& op);

}  // namespace bai::arm
