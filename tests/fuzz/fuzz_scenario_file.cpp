// libFuzzer: the scenario file parser. Anything but a ScenarioError naming a line is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "scenarios/replay/scenario_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    try {
        bai::scenarios::parse_scenario(text, "fuzz.scenario");
    } catch (const bai::scenarios::ScenarioError& e) {
        if (e.where.line < 1) __builtin_trap();
    }
    return 0;
}
