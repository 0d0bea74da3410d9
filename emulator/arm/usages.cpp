#include "emulator/arm/usages.h"

#include <cctype>

#include "common/text/ascii.h"

namespace bai::arm {
namespace {

using nlohmann::json;

struct Family {
    const char* name;  // as vm_family() spells it
    long long limit;   // vCPUs, dedicated and low priority alike
};

// The families and limits the service listed for a subscription in June 2018.
constexpr Family kFamilies[] = {{"D", 24}, {"Dv2", 24}, {"NC", 24}, {"NCv2", 0}, {"NCv3", 0}, {"ND", 0}, {"NV", 24}};
constexpr long long kClusterLimit = 20;
constexpr long long kRegionalLimit = 24;

// The families and dedicated limits listed in June 2021 (eastus), in the service's order; the
// low-priority families had no limit of their own (-1), only the regional one.
constexpr Family kFamilies2021[] = {
    {"D", 24},   {"Dv2", 24},  {"Dv3", 0},       {"DSv2", 24},        {"DSv3", 0},     {"FSv2", 24}, {"NC", 24},
    {"NCv2", 0}, {"NCv3", 0},  {"ND", 0},        {"NDv2", 0},         {"NV", 24},      {"MS", 0},    {"NVv3", 0},
    {"HBv2", 0}, {"HC", 0},    {"NCasT4_v3", 0}, {"NDas_A100_v4", 0}, {"NC Promo", 0}, {"EAv4", 0},  {"H", 0},
    {"HBS", 0},  {"Ev3", 0},   {"Ddsv4", 0},     {"LSv2", 0},         {"HBv3", 0}};
constexpr long long kTotalLimit2021 = 200;
constexpr long long kNoLimit = -1;

json usage(const std::string& name, const std::string& localized, long long current, long long limit) {
    return {{"unit", "Count"}, {"currentValue", current}, {"limit", limit},
            {"name", {{"value", name}, {"localizedValue", localized}}}};
}

long long family_cores(const json& cores, const std::string& family, const char* priority) {
    long long total = 0;
    if (!cores.contains("byVmSize") || !cores["byVmSize"].is_object()) return 0;
    for (const auto& [size, use] : cores["byVmSize"].items()) {
        if (vm_family(size) == family) total += use.value(priority, 0LL);
    }
    return total;
}

}  // namespace

std::string vm_family(std::string_view size) {
    std::string s = text::lower(size);
    if (s.rfind("standard_", 0) == 0) s.erase(0, 9);
    std::string letters;
    size_t i = 0;
    while (i < s.size() && std::isalpha(static_cast<unsigned char>(s[i]))) letters += static_cast<char>(std::toupper(s[i++]));
    if (letters.empty()) return "";
    size_t version = s.rfind("_v");
    if (version != std::string::npos && version + 2 < s.size()) letters += "v" + s.substr(version + 2);
    return letters;
}

json batchai_usages(long long clusters, const json& cores) {
    json items = json::array({usage("Clusters", "Clusters", clusters, kClusterLimit)});
    for (const auto& [priority, key, label] : {std::tuple{"dedicated", "Dedicated", "Dedicated"},
                                               std::tuple{"lowPriority", "LowPriority", "Low Priority"}}) {
        items.push_back(usage(std::string("Total Cluster ") + key + " Regional vCPUs",
                              std::string("Total Cluster ") + label + " Regional vCPUs",
                              cores.value(priority, 0LL), kRegionalLimit));
        for (const Family& f : kFamilies) {
            const std::string family = std::string("Standard ") + f.name + " Family Cluster ";
            items.push_back(usage(family + key + " vCPUs", family + label + " vCPUs", family_cores(cores, f.name, priority),
                                  f.limit));
        }
    }
    return items;
}

json batchai_usages_2021(const json& cores) {
    const long long dedicated = cores.value("dedicated", 0LL), low = cores.value("lowPriority", 0LL);
    json items = json::array({usage("Total Cluster vCPUs", "Total Cluster vCPUs", dedicated + low, kTotalLimit2021)});
    for (const auto& [priority, key, label] : {std::tuple{"dedicated", "Dedicated", "Dedicated"},
                                               std::tuple{"lowPriority", "LowPriority", "Low Priority"}}) {
        const bool dedicated_family = std::string_view(priority) == "dedicated";
        items.push_back(usage(std::string("Total Cluster ") + key + " Regional vCPUs",
                              std::string("Total Cluster ") + label + " Regional vCPUs",
                              cores.value(priority, 0LL), kRegionalLimit));
        // By 2021 the families' localized names said "LowPriority" as their names did (recorded);
        // only the regional entry kept "Low Priority".
        for (const Family& f : kFamilies2021) {
            const std::string name = std::string("Standard ") + f.name + " Family Cluster " + key + " vCPUs";
            items.push_back(usage(name, name, family_cores(cores, f.name, priority), dedicated_family ? f.limit : kNoLimit));
        }
    }
    return items;
}

}  // namespace bai::arm
