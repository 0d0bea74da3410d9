// Reads a JSON file given on the command line; CliError names the flag, the file and the fault.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace bai::cli {

nlohmann::json read_json_file(const std::string& path, const std::string& flag);
std::string read_text_file(const std::string& path, const std::string& flag);

// The body of a cluster or file-server create: -f/--config-file's (or an empty one), its
// "properties" an object, with -s/--vm-size put in; a usage error when neither gives vmSize.
nlohmann::json create_body(const std::string& config_file, const std::string& vm_size);

}  // namespace bai::cli
