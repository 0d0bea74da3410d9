// bai az-login / az-logout: point the real az CLI at the running emulator. az-login registers (or
// updates) the az cloud BatchAIEmulator with the emulator's ARM endpoint as resource manager and
// sign-in authority, makes it the active cloud, signs in with a service principal (the
// well-known one by default) and prints the REQUESTS_CA_BUNDLE line az needs to trust the
// emulator; az-logout makes AzureCloud the active cloud again. Both honour $AZURE_CONFIG_DIR, as
// az does (they run az).
#pragma once

#include <CLI/CLI.hpp>

#include "tools/bai/command_context.h"

namespace bai::cli {

inline constexpr const char* kEmulatorCloudName = "BatchAIEmulator";

void add_az_login_commands(CLI::App& app, GlobalOptions& options);

}  // namespace bai::cli
