// Durations as Batch AI clients write them: ISO 8601 ("P7D", "PT1H30M") or .NET TimeSpan
// ("7.00:00:00", "01:30:00").
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

namespace bai::validation {

std::optional<std::chrono::seconds> parse_duration(std::string_view text);

}  // namespace bai::validation
