#include "tools/bai/user_defaults.h"

#include <cstdlib>
#include <fstream>

#include "common/text/ascii.h"
#include "tools/bai/cli_error.h"

namespace bai::cli {
std::filesystem::path UserDefaults::default_file() {
    if (const char* dir = std::getenv("BAI_CONFIG_DIR"); dir != nullptr && *dir != '\0') {
        return std::filesystem::path(dir) / "config";
    }
    const char* home = std::getenv("HOME");
    return std::filesystem::path(home != nullptr && *home != '\0' ? home : ".") / ".bai" / "config";
}

std::filesystem::path UserDefaults::az_file() {
    if (const char* dir = std::getenv("AZURE_CONFIG_DIR"); dir != nullptr && *dir != '\0') {
        return std::filesystem::path(dir) / "config";
    }
    const char* home = std::getenv("HOME");
    return std::filesystem::path(home != nullptr && *home != '\0' ? home : ".") / ".azure" / "config";
}

bool UserDefaults::known_key(const std::string& key) {
    return key == "group" || key == "workspace" || key == "location" || key == "experiment" ||
           key == "subscription";
}

UserDefaults UserDefaults::load(const std::filesystem::path& file) {
    UserDefaults defaults;
    std::ifstream in(file);
    if (!in) return defaults;
    std::string line;
    std::string section;
    for (int number = 1; std::getline(in, line); ++number) {
        if (!line.empty() && line.back() == '\r') line.pop_back();  // a file written on Windows
        line = std::string(text::trim(line));
        if (line.empty() || line[0] == '#' || line[0] == ';') continue;
        if (line.front() == '[' && line.back() == ']') {
            section = std::string(text::trim(line.substr(1, line.size() - 2)));
            continue;
        }
        size_t eq = line.find('=');
        if (eq == std::string::npos) {
            throw CliError(file.string() + ":" + std::to_string(number) + ": expected 'key = value', got '" +
                           line + "'");
        }
        if (section == "defaults") {
            defaults.values_[std::string(text::trim(line.substr(0, eq)))] = std::string(text::trim(line.substr(eq + 1)));
        }
    }
    return defaults;
}

std::optional<std::string> UserDefaults::get(const std::string& key) const {
    auto it = values_.find(key);
    if (it == values_.end() || it->second.empty()) return std::nullopt;
    return it->second;
}

void UserDefaults::set(const std::string& key, const std::string& value) {
    if (value.empty()) {
        values_.erase(key);
    } else {
        values_[key] = value;
    }
}

void UserDefaults::save(const std::filesystem::path& file) const {
    std::error_code ec;
    if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path(), ec);
    std::filesystem::path temporary = file;
    temporary += ".tmp";
    {
        std::ofstream out(temporary, std::ios::trunc);
        out << "[defaults]\n";
        for (const auto& [key, value] : values_) out << key << " = " << value << "\n";
        if (!out) throw CliError("cannot write " + temporary.string());
    }
    std::filesystem::rename(temporary, file, ec);
    if (ec) throw CliError("cannot write " + file.string() + ": " + ec.message());
}

}  // namespace bai::cli
