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

// Which recordings of the service a resource's defaults follow. The service changed its defaults
// while it ran: the 2018-05-01 API answers as the service did in its latest recordings (`latest`:
// P150D, initialNodeCount from minimumNodeCount from February 2020, maxAttempts 5 by February
// 2021, the amlcompute image by July 2021, ...); the flat API (2017-09-01-preview, 2018-03-01) as
// its own latest recordings (December 2017, March 2018).
enum class Era { early_2018, latest };

// The job's maxJobDurationSeconds cap (February 2020: 30 days, whatever maxWallClockTime said).
inline constexpr long long kMaxJobDurationSeconds = 30LL * 24 * 3600;
// How many times the service would run a job (constraints.maxAttempts: 1 in November 2020, 5 from
// February 2021, recorded). The emulator runs a job once, requeues aside.
inline constexpr int kMaxAttempts = 5;

void fill_job_defaults(nlohmann::json& properties, const std::string& output_segment, Era era = Era::early_2018);
void fill_cluster_defaults(nlohmann::json& properties, const std::string& setup_suffix, Era era = Era::early_2018);
// The defaults inside scaleSettings (manual or autoScale), at create and at update.
void fill_scale_defaults(nlohmann::json& scale_settings, Era era = Era::early_2018);
// 400 PropertyNotSupported for the images the service refused by February 2020 (the Ubuntu Data
// Science VM, microsoft-ads linux-data-science-vm-ubuntu linuxdsvmubuntu, recorded).
void check_cluster_image(const nlohmann::json& properties);
// A file server's mount settings (its address, its export at mount_point: /data, as the service
// answered; /mnt/data in the 2017-09-01-preview) and, where the body names no subnet, the subnet
// of the virtual network the service made for it in a resource group of its own.
void fill_file_server_defaults(nlohmann::json& properties, const std::string& address,
                               const std::string& mount_point = "/data", const std::string& subscription = "");

// The subnet the service made for a file server given none:
// /subscriptions/S/resourceGroups/fileserverrg-G/providers/Microsoft.Network/virtualNetworks/Gvnet/subnets/Subnet-1
std::string automatic_subnet_id(const std::string& subscription);

}  // namespace bai::arm
