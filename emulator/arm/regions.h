// The regions the emulator's subscriptions list and its providers serve in: the public cloud's
// physical regions most used (Batch AI ran in a subset of them), with their pairs.
#pragma once

namespace bai::arm {

struct Region {
    const char* name;
    const char* display;
    const char* geography;
    const char* paired;
};

inline constexpr Region kRegions[] = {
    {"eastus", "East US", "US", "westus"},
    {"eastus2", "East US 2", "US", "centralus"},
    {"southcentralus", "South Central US", "US", "northcentralus"},
    {"westus2", "West US 2", "US", "westcentralus"},
    {"westus3", "West US 3", "US", "eastus"},
    {"australiaeast", "Australia East", "Asia Pacific", "australiasoutheast"},
    {"southeastasia", "Southeast Asia", "Asia Pacific", "eastasia"},
    {"northeurope", "North Europe", "Europe", "westeurope"},
    {"swedencentral", "Sweden Central", "Europe", "swedensouth"},
    {"uksouth", "UK South", "Europe", "ukwest"},
    {"westeurope", "West Europe", "Europe", "northeurope"},
    {"centralus", "Central US", "US", "eastus2"},
    {"southafricanorth", "South Africa North", "Africa", "southafricawest"},
    {"centralindia", "Central India", "Asia Pacific", "southindia"},
    {"eastasia", "East Asia", "Asia Pacific", "southeastasia"},
    {"japaneast", "Japan East", "Asia Pacific", "japanwest"},
    {"koreacentral", "Korea Central", "Asia Pacific", "koreasouth"},
    {"canadacentral", "Canada Central", "Canada", "canadaeast"},
    {"francecentral", "France Central", "Europe", "francesouth"},
    {"germanywestcentral", "Germany West Central", "Europe", "germanynorth"},
    {"norwayeast", "Norway East", "Europe", "norwaywest"},
    {"switzerlandnorth", "Switzerland North", "Europe", "switzerlandwest"},
    {"brazilsouth", "Brazil South", "South America", "southcentralus"},
    {"northcentralus", "North Central US", "US", "southcentralus"},
    {"westus", "West US", "US", "eastus"},
    {"westcentralus", "West Central US", "US", "westus2"},
    {"canadaeast", "Canada East", "Canada", "canadacentral"},
    {"japanwest", "Japan West", "Asia Pacific", "japaneast"},
    {"ukwest", "UK West", "Europe", "uksouth"},
    {"australiasoutheast", "Australia Southeast", "Asia Pacific", "australiaeast"},
};

}  // namespace bai::arm
