// DIR/endpoints.json: where a running emulator listens, written by the daemon, read by clients.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace bai::endpoints {

struct Endpoints {
    std::string arm;      // https://127.0.0.1:P
    std::string blob;     // http://127.0.0.1:P
    std::string file;     // http://127.0.0.1:P
    std::string ca_cert;  // absolute path of the PEM that clients must trust for ARM
    long pid = 0;
    std::string batch;  // http://127.0.0.1:P, the Batch service (empty in files of older versions)
    // http://127.0.0.1:P, the proxy front door for Azure's own host names, and the PEM of the CA
    // that signs its certificates (both empty in files of older versions).
    std::string proxy;
    std::string proxy_ca;
    // The PEM bundle a client of the proxy trusts: the system's CAs, the proxy's CA and the ARM
    // endpoint's certificate (REQUESTS_CA_BUNDLE for both ways in).
    std::string ca_bundle;
};

inline constexpr const char* kFileName = "endpoints.json";

// Writes atomically (a reader sees the old file or the whole new one).
void write(const std::filesystem::path& path, const Endpoints& endpoints);
// nullopt when the file is missing; throws std::runtime_error naming the fault when malformed.
std::optional<Endpoints> read(const std::filesystem::path& path);

}  // namespace bai::endpoints
