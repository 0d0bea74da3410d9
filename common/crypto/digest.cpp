#include "common/crypto/digest.h"

#include <openssl/evp.h>
#include <openssl/core_names.h>
#include <openssl/params.h>

#include <stdexcept>

namespace bai::crypto {

Md5::Md5() : ctx_(EVP_MD_CTX_new()) {
    if (ctx_ == nullptr || EVP_DigestInit_ex(ctx_, EVP_md5(), nullptr) != 1) {
        throw std::runtime_error("MD5 unavailable");
    }
}

Md5::~Md5() { EVP_MD_CTX_free(ctx_); }

void Md5::update(std::string_view bytes) { EVP_DigestUpdate(ctx_, bytes.data(), bytes.size()); }

std::string Md5::finish() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    EVP_DigestFinal_ex(ctx_, digest, &length);
    return std::string(reinterpret_cast<char*>(digest), length);
}

std::string md5(std::string_view bytes) {
    Md5 m;
    m.update(bytes);
    return m.finish();
}

std::string hmac_sha256(std::string_view key, std::string_view message) {
    // OpenSSL 3's one-shot HMAC() looks the algorithm up on every call; fetch it once.
    static EVP_MAC* const mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
    static char digest_name[] = "SHA256";
    if (mac == nullptr) throw std::runtime_error("HMAC unavailable");
    EVP_MAC_CTX* ctx = EVP_MAC_CTX_new(mac);
    OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string("digest", digest_name, 0),
                           OSSL_PARAM_construct_end()};
    unsigned char digest[EVP_MAX_MD_SIZE];
    size_t length = 0;
    bool ok = ctx != nullptr &&
              EVP_MAC_init(ctx, reinterpret_cast<const unsigned char*>(key.data()), key.size(), params) == 1 &&
              EVP_MAC_update(ctx, reinterpret_cast<const unsigned char*>(message.data()), message.size()) == 1 &&
              EVP_MAC_final(ctx, digest, &length, sizeof digest) == 1;
    EVP_MAC_CTX_free(ctx);
    if (!ok) throw std::runtime_error("HMAC-SHA256 failed");
    return std::string(reinterpret_cast<char*>(digest), length);
}

}  // namespace bai::crypto
