#include "common/crypto/digest.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

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
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
         reinterpret_cast<const unsigned char*>(message.data()), message.size(), digest, &length);
    return std::string(reinterpret_cast<char*>(digest), length);
}

}  // namespace bai::crypto
