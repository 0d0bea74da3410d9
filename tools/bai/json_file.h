// Reads a JSON file given on the command line; CliError names the flag, the file and the fault.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace bai::cli {

nlohmann::json read_json_file(const std::string& path, const std::string& flag);
std::string read_text_file(const std::string& path, const std::string& flag);

}  // namespace bai::cli
