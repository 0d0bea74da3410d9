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

}  // namespace bai::cli
