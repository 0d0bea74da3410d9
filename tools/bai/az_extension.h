// The az extension batchai-flat (tools/az_extension/batchai_flat/, compiled in by CMake through
// az_extension_files.cpp.in): the first Batch AI releases' flat `az batchai` lines, each handed to
// this bai. `bai az-login` installs it, offline, where az looks for extensions.
#pragma once

#include <cstddef>
#include <string>

namespace bai::cli {

struct AzExtensionFile {
    const char* path;  // relative to the extension's directory
    const char* body;
};

extern const AzExtensionFile kAzExtensionFiles[];
extern const size_t kAzExtensionFileCount;

inline constexpr const char* kAzExtensionName = "batchai-flat";

// Writes the extension into $AZURE_EXTENSION_DIR, else $AZURE_CONFIG_DIR/cliextensions, else
// ~/.azure/cliextensions (replacing an older copy), records this bai's path in it, and drops az's
// command index (az would otherwise not look at the extension for commands its modules have).
// Returns the extension's directory.
std::string install_az_extension();

}  // namespace bai::cli
