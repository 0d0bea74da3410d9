// HTTP(S) clients for the emulator's endpoints.
#pragma once

#include <httplib.h>

#include <chrono>
#include <memory>
#include <string>

#include "common/endpoints/endpoints_file.h"

namespace bai::cli {

// A client for `base_url` (http:// or https://). For HTTPS the server is verified against
// `ca_cert` when given; with none, only a loopback server is accepted, unverified.
// Throws std::invalid_argument for a URL it cannot use.
std::unique_ptr<httplib::Client> make_client(const std::string& base_url, const std::string& ca_cert,
                                             std::chrono::milliseconds timeout);

// GET of an absolute URL (a downloadUrl): a client for its origin, the request for the rest.
// Throws std::invalid_argument for a URL it cannot use.
httplib::Result get_url(const std::string& url, const httplib::Headers& headers, const std::string& ca_cert,
                        std::chrono::milliseconds timeout);

// With only the ARM endpoint known, asks the emulator where its Blob, File and Batch endpoints are.
void discover_storage_endpoints(endpoints::Endpoints& e);

}  // namespace bai::cli
