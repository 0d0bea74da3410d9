// The comparisons of a scenario's expectations and waits (==, !=, <, <=, >, >=, contains,
// exists, absent) against a value that may be absent.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "scenarios/replay/scenario_file.h"

namespace bai::scenarios {

// Whether `actual` (nullopt: there is no value) satisfies `comparison`.
bool holds(const std::optional<nlohmann::json>& actual, const Comparison& comparison);

// "== \"succeeded\"": the comparison as a reader wrote it.
std::string describe(const Comparison& comparison);
// The value as a message shows it ("absent" when there is none; long text cut).
std::string describe(const std::optional<nlohmann::json>& actual);

}  // namespace bai::scenarios
