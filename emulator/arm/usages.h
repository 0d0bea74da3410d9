// Usages_List: the quotas of a location as the service listed them (June 2018, 2018-05-01):
// the clusters, then the regional dedicated vCPUs and each VM family's, then the same for
// low-priority vCPUs, with the limits a new subscription had in that region.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace bai::arm {

// "Standard_NC6s_v2" -> "NCv2", "STANDARD_D1" -> "D", "Standard_D2_v2" -> "Dv2"; "" if not a size name.
std::string vm_family(std::string_view vm_size);

// The usage entries for `clusters` clusters in the location and the engine's cores_in_use.
nlohmann::json batchai_usages(long long clusters, const nlohmann::json& cores);

}  // namespace bai::arm
