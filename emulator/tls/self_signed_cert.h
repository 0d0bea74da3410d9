// The ARM endpoint's certificate: self-signed, made on first start and kept in DIR/tls/.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace bai::tls {

struct CertificateFiles {
    std::filesystem::path certificate;  // PEM; what clients trust (REQUESTS_CA_BUNDLE)
    std::filesystem::path private_key;  // PEM, mode 0600
};

// Returns the certificate in `dir` (cert.pem, key.pem), generating a new one when none exists,
// when it has expired, or when it does not cover `host`. Its subject alternative names are
// 127.0.0.1, ::1, localhost and `host`. Throws std::runtime_error on failure.
CertificateFiles ensure_certificate(const std::filesystem::path& dir, const std::string& host);
// The same for every name of `hosts` (the listening host, and the name clients use: --public-host).
CertificateFiles ensure_certificate(const std::filesystem::path& dir, const std::vector<std::string>& hosts);

// True when the PEM certificate at `path` is valid now and names `host` (an IP or a DNS name).
bool certificate_covers(const std::filesystem::path& path, const std::string& host);

}  // namespace bai::tls
