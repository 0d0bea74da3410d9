// Usages_List: the quotas of a location as the service listed them, with the limits a
// subscription had in that region. Two models were recorded: June 2018 (the clusters, then the
// regional dedicated vCPUs and each of 7 VM families', then the same for low-priority vCPUs: 17
// entries) and June 2021 (the total vCPUs, then the regional dedicated vCPUs and each of 26
// families', then the same for low-priority vCPUs, whose families had no limit: 55 entries). The
// 2018-05-01 API lists the latest; 2018-03-01 the 2018 one (that API's era).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace bai::arm {

// "Standard_NC6s_v2" -> "NCv2", "STANDARD_D1" -> "D", "Standard_D2_v2" -> "Dv2"; "" if not a size name.
std::string vm_family(std::string_view vm_size);

// The June 2018 entries for `clusters` clusters in the location and the engine's cores_in_use.
nlohmann::json batchai_usages(long long clusters, const nlohmann::json& cores);
// The June 2021 entries for the engine's cores_in_use.
nlohmann::json batchai_usages_2021(const nlohmann::json& cores);

}  // namespace bai::arm
