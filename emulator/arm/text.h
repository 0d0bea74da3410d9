// Small string helpers of the ARM layer: ARM compares names and path literals case-insensitively.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace bai::arm {

bool iequals(std::string_view a, std::string_view b);
std::string lower(std::string_view text);
std::string_view trim(std::string_view text);
// "/a/b//c/" -> {"a", "b", "c"}
std::vector<std::string> split_path(std::string_view path);

}  // namespace bai::arm
