// libFuzzer: bai's --query parser and evaluator, the az output renderers and the job.json lint.
// Input: the expression on the first line, a JSON document after it.
#include <cstddef>
#include <cstdint>
#include <string>

#include "tools/bai/az_output.h"
#include "tools/bai/cli_error.h"
#include "tools/bai/job_lint.h"
#include "tools/bai/json_query.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string input(reinterpret_cast<const char*>(data), size);
    size_t newline = input.find('\n');
    std::string expression = input.substr(0, newline);
    auto document = nlohmann::json::parse(newline == std::string::npos ? "null" : input.substr(newline + 1), nullptr,
                                          false);
    if (document.is_discarded()) document = nullptr;
    try {
        nlohmann::json result = bai::cli::query_json(document, expression);
        bai::cli::render_table(result, {});
        bai::cli::render_tsv(result);
    } catch (const bai::cli::CliError& e) {
        if (e.exit_code != bai::cli::kExitUsage) __builtin_trap();
    }
    for (const auto& finding : bai::cli::lint_job(document, {"STANDARD_NC24"})) {
        if (finding.path.empty()) __builtin_trap();
    }
    return 0;
}
