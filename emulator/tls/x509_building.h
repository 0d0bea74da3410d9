// What making and keeping X.509 certificates takes, for the ARM endpoint's certificate and the
// proxy front door's CA: extensions from OpenSSL's configuration syntax, random serials, PEM files
// written atomically with their mode set before their content.
#pragma once

#include <openssl/evp.h>
#include <openssl/x509.h>
#include <sys/types.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "common/crypto/owned.h"

namespace bai::tls {

using PkeyPtr = crypto::Owned<EVP_PKEY, EVP_PKEY_free>;
using X509Ptr = crypto::Owned<X509, X509_free>;
using FilePtr = crypto::Owned<std::FILE, std::fclose>;

// Throws std::runtime_error("TLS certificate: " + what).
[[noreturn]] void fail(const std::string& what);

// Adds the extension `nid` written as in openssl.cnf ("critical,CA:TRUE"), with `issuer` for
// the authority key identifier (the certificate itself when self-signed).
void add_extension(X509* cert, X509* issuer, int nid, const std::string& value);
// A random positive 128-bit serial number.
void set_random_serial(X509* cert);
// Valid from `before_seconds` ago (clocks differ a little) for `seconds`.
void set_validity(X509* cert, long before_seconds, long seconds);

X509Ptr load_certificate(const std::filesystem::path& path);
PkeyPtr load_private_key(const std::filesystem::path& path);
// Writes `key` (when not null) or `cert` as PEM: a file of `mode` renamed over `path`.
void write_pem(const std::filesystem::path& path, mode_t mode, EVP_PKEY* key, X509* cert);
std::string to_pem(X509* cert);

}  // namespace bai::tls
