#include "tools/bai/json_file.h"

#include <fstream>
#include <sstream>

#include "tools/bai/cli_error.h"

namespace bai::cli {

std::string read_text_file(const std::string& path, const std::string& flag) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw CliError(flag + ": cannot read '" + path + "'", kExitUsage);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

nlohmann::json read_json_file(const std::string& path, const std::string& flag) {
    std::string text = read_text_file(path, flag);
    try {
        nlohmann::json doc = nlohmann::json::parse(text);
        if (!doc.is_object()) throw CliError(flag + ": '" + path + "' must hold a JSON object", kExitUsage);
        return doc;
    } catch (const nlohmann::json::parse_error& e) {
        throw CliError(flag + ": '" + path + "' is not valid JSON: " + e.what(), kExitUsage);
    }
}

nlohmann::json create_body(const std::string& config_file, const std::string& vm_size) {
    nlohmann::json body = config_file.empty() ? nlohmann::json::object() : read_json_file(config_file, "--config-file");
    if (!body.contains("properties")) body["properties"] = nlohmann::json::object();
    if (!body["properties"].is_object()) throw CliError("--config-file: \"properties\" must be an object", kExitUsage);
    nlohmann::json& props = body["properties"];
    if (!vm_size.empty()) props["vmSize"] = vm_size;
    if (!props.contains("vmSize")) throw CliError("the following argument is required: --vm-size/-s", kExitUsage);
    return body;
}

}  // namespace bai::cli
