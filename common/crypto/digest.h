// Incremental MD5 (Content-MD5), SHA-256 and HMAC-SHA256 (SharedKey, SAS).
#pragma once

#include <memory>
#include <string>
#include <string_view>

struct evp_md_ctx_st;
struct x509_st;

namespace bai::crypto {

class Md5 {
public:
    Md5();
    ~Md5();
    Md5(const Md5&) = delete;
    Md5& operator=(const Md5&) = delete;
    void update(std::string_view bytes);
    // The 16-byte digest; the object cannot be updated afterwards.
    std::string finish();

private:
    evp_md_ctx_st* ctx_;
};

std::string md5(std::string_view bytes);
// The 32-byte SHA-256 of `bytes`.
std::string sha256(std::string_view bytes);
std::string hmac_sha256(std::string_view key, std::string_view message);
// `bytes` as lower-case hexadecimal (a digest, a thumbprint).
std::string hex_of(std::string_view bytes);

// Whether a secret given (a password, a token) is the one expected, in time that depends on the
// lengths only, never on where they differ (OpenSSL's CRYPTO_memcmp).
bool same_secret(std::string_view given, std::string_view expected);
// A certificate's thumbprint as Windows and Azure name it: the SHA-1 of its DER encoding, in
// lower-case hex; empty when OpenSSL cannot take it.
std::string certificate_thumbprint(const x509_st* certificate);

}  // namespace bai::crypto
