// `bai configure --defaults key=value ...`: values that commands use when a flag is left out,
// as `az configure --defaults` did (group, workspace, location, experiment, subscription).
// Kept in $BAI_CONFIG_DIR/config, else ~/.bai/config, as "[defaults]" then "key = value" lines.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace bai::cli {

class UserDefaults {
public:
    static std::filesystem::path default_file();
    // The az CLI's configuration: $AZURE_CONFIG_DIR/config, else ~/.azure/config.
    static std::filesystem::path az_file();
    // A missing file is no defaults; a malformed line throws CliError naming the file and line.
    static UserDefaults load(const std::filesystem::path& file);

    std::optional<std::string> get(const std::string& key) const;
    // An empty value removes the key.
    void set(const std::string& key, const std::string& value);
    void save(const std::filesystem::path& file) const;
    const std::map<std::string, std::string>& values() const { return values_; }

    static bool known_key(const std::string& key);

private:
    std::map<std::string, std::string> values_;
};

}  // namespace bai::cli
