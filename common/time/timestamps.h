// Time as the Azure wire formats write it.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace bai::time {

using Clock = std::chrono::system_clock;
using TimePoint = std::chrono::time_point<Clock, std::chrono::nanoseconds>;

// Now, in whole 100 ns ticks.
TimePoint now();

// "Sun, 22 Nov 2026 04:15:00 GMT" (HTTP dates: Last-Modified, x-ms-date).
std::string format_rfc1123(TimePoint t);
std::optional<TimePoint> parse_rfc1123(std::string_view text);

// "2026-11-22T04:15:00.1234567Z" with `fraction_digits` digits (0 to 7) after the seconds.
std::string format_iso8601(TimePoint t, int fraction_digits = 7);
// format_iso8601(now()).
std::string now_iso8601();
// Accepts "YYYY-MM-DDThh:mm[:ss[.fffffff]]Z" or a "+hh:mm" offset, or a bare "YYYY-MM-DD".
std::optional<TimePoint> parse_iso8601(std::string_view text);

// 100-nanosecond ticks since the Unix epoch: how timestamps are stored.
std::int64_t to_ticks(TimePoint t);
TimePoint from_ticks(std::int64_t ticks);

}  // namespace bai::time
