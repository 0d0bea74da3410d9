// HTTP(S) clients for the emulator's endpoints.
#pragma once

#include <httplib.h>

#include <chrono>
#include <memory>
#include <string>

namespace bai::cli {

// A client for `base_url` (http:// or https://). For HTTPS the server is verified against
// `ca_cert` when given; with none, only a loopback server is accepted, unverified.
// Throws std::invalid_argument for a URL it cannot use.
std::unique_ptr<httplib::Client> make_client(const std::string& base_url, const std::string& ca_cert,
                                             std::chrono::milliseconds timeout);

}  // namespace bai::cli
