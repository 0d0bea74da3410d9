#include "tools/bai/az_extension.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <system_error>

#include "common/env/variables.h"
#include "tools/bai/cli_error.h"

namespace bai::cli {
namespace {

namespace fs = std::filesystem;

// az's configuration directory, as az finds it.
fs::path az_configuration_dir() {
    if (auto dir = env::variable("AZURE_CONFIG_DIR")) return *dir;
    return fs::path(env::variable("HOME").value_or("")) / ".azure";
}

void write_extension_file(const fs::path& path, const std::string& body) {
    fs::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << body;
    if (!out.flush()) throw CliError("cannot write " + path.string(), 1);
}

}  // namespace

std::string install_az_extension() {
    const auto custom = env::variable("AZURE_EXTENSION_DIR");
    const fs::path dir = (custom ? fs::path(*custom) : az_configuration_dir() / "cliextensions") / kAzExtensionName;
    std::error_code ec;
    fs::remove_all(dir, ec);  // an older version's files go with it
    for (size_t i = 0; i < kAzExtensionFileCount; ++i) write_extension_file(dir / kAzExtensionFiles[i].path, kAzExtensionFiles[i].body);
    // The extension runs the bai that installed it (PATH may name none, or another).
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    write_extension_file(dir / "azext_batchai_flat" / "installed.json", nlohmann::json{{"bai", ec ? "" : self.string()}}.dump() + "\n");
    fs::remove(az_configuration_dir() / "commandIndex.json", ec);
    return dir.string();
}

}  // namespace bai::cli
