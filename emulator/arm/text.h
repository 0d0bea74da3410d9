// The string helpers of the ARM layer: ARM compares names and path literals case-insensitively
// (the shared ASCII helpers), and splits paths into segments.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/text/ascii.h"

namespace bai::arm {

using text::iequals;
using text::lower;
using text::upper;
using text::trim;

// "/a/b//c/" -> {"a", "b", "c"}
std::vector<std::string> split_path(std::string_view path);

}  // namespace bai::arm
