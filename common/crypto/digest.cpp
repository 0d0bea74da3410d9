#include "common/crypto/digest.h"

#include <openssl/evp.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/params.h>
#include <openssl/x509.h>

#include <map>
#include <stdexcept>
#include <string>

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

bool same_secret(std::string_view given, std::string_view expected) {
    return given.size() == expected.size() && CRYPTO_memcmp(given.data(), expected.data(), given.size()) == 0;
}

std::string md5(std::string_view bytes) {
    Md5 m;
    m.update(bytes);
    return m.finish();
}

std::string sha256(std::string_view bytes) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    if (EVP_Digest(bytes.data(), bytes.size(), digest, &size, EVP_sha256(), nullptr) != 1) {
        throw std::runtime_error("SHA-256 failed");
    }
    return std::string(reinterpret_cast<char*>(digest), size);
}

std::string hmac_sha256(std::string_view key, std::string_view message) {
    // Setting a MAC up (algorithm fetch, key schedule) costs more than hashing a request's
    // string-to-sign, so each thread keeps its contexts by key and re-initialises them with the
    // key they already hold. The few keys are those of the emulator's accounts.
    struct Contexts {
        std::map<std::string, EVP_MAC_CTX*, std::less<>> by_key;
        ~Contexts() {
            for (auto& [k, ctx] : by_key) EVP_MAC_CTX_free(ctx);
        }
    };
    static EVP_MAC* const mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
    if (mac == nullptr) throw std::runtime_error("HMAC unavailable");
    thread_local Contexts contexts;
    EVP_MAC_CTX* ctx = nullptr;
    bool ok = true;
    if (auto it = contexts.by_key.find(key); it != contexts.by_key.end()) {
        ctx = it->second;
        ok = EVP_MAC_init(ctx, nullptr, 0, nullptr) == 1;
    } else {
        char digest_name[] = "SHA256";
        OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string("digest", digest_name, 0),
                               OSSL_PARAM_construct_end()};
        ctx = EVP_MAC_CTX_new(mac);
        ok = ctx != nullptr && EVP_MAC_init(ctx, reinterpret_cast<const unsigned char*>(key.data()),
                                            key.size(), params) == 1;
        if (!ok) {
            EVP_MAC_CTX_free(ctx);
            throw std::runtime_error("HMAC-SHA256 failed");
        }
        if (contexts.by_key.size() >= 64) {  // unbounded keys: start over
            for (auto& [k, old] : contexts.by_key) EVP_MAC_CTX_free(old);
            contexts.by_key.clear();
        }
        contexts.by_key.emplace(std::string(key), ctx);
    }
    unsigned char digest[EVP_MAX_MD_SIZE];
    size_t length = 0;
    ok = ok &&
         EVP_MAC_update(ctx, reinterpret_cast<const unsigned char*>(message.data()), message.size()) == 1 &&
         EVP_MAC_final(ctx, digest, &length, sizeof digest) == 1;
    if (!ok) throw std::runtime_error("HMAC-SHA256 failed");
    return std::string(reinterpret_cast<char*>(digest), length);
}

std::string certificate_thumbprint(const X509* certificate) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned size = 0;
    if (certificate == nullptr || X509_digest(certificate, EVP_sha1(), digest, &size) != 1) return "";
    return hex_of(std::string_view(reinterpret_cast<const char*>(digest), size));
}

std::string hex_of(std::string_view bytes) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out;
    out.reserve(bytes.size() * 2);
    for (unsigned char b : bytes) {
        out += kDigits[b >> 4];
        out += kDigits[b & 15];
    }
    return out;
}

}  // namespace bai::crypto
