// The fields the service filled in when it stored a create body (batchai-api.md section 1.3):
// defaults the spec declares, toolType, processCount, the output path segment, normalised
// durations, and the read-only state fields of a new resource.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

namespace bai::arm {

// "P7D", "PT1H30M": how the service serialised durations, whatever form the client sent.
std::string iso_duration(std::chrono::seconds d);
// The toolType of a job's properties: "custom", "custommpi", "horovod", "cntk", ...
std::string tool_type(const nlohmann::json& properties);

// creationTime, provisioningState and its transition time.
void stamp_new(nlohmann::json& properties, const std::string& provisioning_state);
void set_provisioning_state(nlohmann::json& properties, const std::string& state);

void fill_job_defaults(nlohmann::json& properties, const std::string& output_segment);
void fill_cluster_defaults(nlohmann::json& properties, const std::string& setup_suffix);
// The defaults inside scaleSettings (manual or autoScale), at create and at update.
void fill_scale_defaults(nlohmann::json& scale_settings);
// A file server's mount settings (its address, its export at mount_point: /data, as the service
// answered; /mnt/data in the 2017-09-01-preview) and, where the body names no subnet, the subnet
// of the virtual network the service made for it in a resource group of its own.
void fill_file_server_defaults(nlohmann::json& properties, const std::string& address,
                               const std::string& mount_point = "/data", const std::string& subscription = "");

// The subnet the service made for a file server given none:
// /subscriptions/S/resourceGroups/fileserverrg-G/providers/Microsoft.Network/virtualNetworks/Gvnet/subnets/Subnet-1
std::string automatic_subnet_id(const std::string& subscription);

}  // namespace bai::arm
