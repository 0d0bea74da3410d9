// bai env / bai exec: route a shell, or one command, through the emulator's proxy front door, so that
// programs written for the cloud reach the emulator at Azure's own host names unchanged.
// `eval "$(bai env)"` exports the proxy (HTTPS_PROXY, NO_PROXY for loopback) and the trust bundle
// (REQUESTS_CA_BUNDLE, SSL_CERT_FILE, CURL_CA_BUNDLE, NODE_EXTRA_CA_CERTS: the system's CAs, the
// proxy's CA and the ARM endpoint's certificate); `bai env --unset` undoes it; `bai exec -- CMD ARGS`
// runs one command so.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <utility>
#include <vector>

#include "common/endpoints/endpoints_file.h"
#include "tools/bai/command_context.h"

namespace bai::cli {

// The variables and their values for the emulator at `e` (its proxy and bundle must be known).
std::vector<std::pair<std::string, std::string>> proxy_environment(const endpoints::Endpoints& e);

void add_env_commands(CLI::App& app, GlobalOptions& options);

}  // namespace bai::cli
