#include "emulator/identity/signing_key.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <sys/stat.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "common/crypto/base64.h"
#include "common/crypto/digest.h"
#include "common/crypto/owned.h"

namespace bai::identity {
namespace {

using PkeyPtr = crypto::Owned<EVP_PKEY, EVP_PKEY_free>;
using BioPtr = crypto::Owned<BIO, BIO_free>;
using BnPtr = crypto::Owned<BIGNUM, BN_free>;

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error("token signing key: " + what); }

std::string bio_text(BIO* bio) {
    char* data = nullptr;
    long size = BIO_get_mem_data(bio, &data);
    return std::string(data, static_cast<size_t>(size));
}

std::string big_endian(const EVP_PKEY* key, const char* param) {
    BIGNUM* raw = nullptr;
    if (EVP_PKEY_get_bn_param(key, param, &raw) != 1) fail(std::string("no ") + param);
    BnPtr bn(raw);
    std::string bytes(static_cast<size_t>(BN_num_bytes(bn.get())), '\0');
    BN_bn2bin(bn.get(), reinterpret_cast<unsigned char*>(bytes.data()));
    return bytes;
}

}  // namespace

std::string base64url(std::string_view bytes) {
    std::string text = crypto::base64_encode(bytes);
    while (!text.empty() && text.back() == '=') text.pop_back();
    for (char& c : text) {
        if (c == '+') c = '-';
        if (c == '/') c = '_';
    }
    return text;
}

SigningKey load_or_create_signing_key(const std::filesystem::path& dir) {
    std::filesystem::create_directories(dir);
    const std::filesystem::path path = dir / "signing-key.pem";
    PkeyPtr key;
    if (std::filesystem::exists(path)) {
        std::FILE* file = std::fopen(path.c_str(), "r");
        if (file == nullptr) fail("cannot read " + path.string());
        key.reset(PEM_read_PrivateKey(file, nullptr, nullptr, nullptr));
        std::fclose(file);
        if (!key || EVP_PKEY_get_base_id(key.get()) != EVP_PKEY_RSA) fail(path.string() + " is not an RSA key");
    } else {
        key.reset(EVP_RSA_gen(2048));
        if (!key) fail("cannot generate an RSA key");
        std::filesystem::path tmp = path;
        tmp += ".tmp";
        std::FILE* file = std::fopen(tmp.c_str(), "w");
        if (file == nullptr) fail("cannot write " + tmp.string());
        ::fchmod(fileno(file), 0600);
        bool ok = PEM_write_PrivateKey(file, key.get(), nullptr, nullptr, 0, nullptr, nullptr) == 1;
        ok = std::fflush(file) == 0 && ok;
        std::fclose(file);
        if (!ok) fail("cannot write " + tmp.string());
        std::filesystem::rename(tmp, path);
    }
    SigningKey out;
    BioPtr priv(BIO_new(BIO_s_mem()));
    BioPtr pub(BIO_new(BIO_s_mem()));
    if (PEM_write_bio_PrivateKey(priv.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1 ||
        PEM_write_bio_PUBKEY(pub.get(), key.get()) != 1) {
        fail("cannot encode the key");
    }
    out.private_pem = bio_text(priv.get());
    out.public_pem = bio_text(pub.get());
    const std::string n = base64url(big_endian(key.get(), OSSL_PKEY_PARAM_RSA_N));
    const std::string e = base64url(big_endian(key.get(), OSSL_PKEY_PARAM_RSA_E));
    // RFC 7638: the SHA-256 of the required members, in lexicographic order, without spaces.
    out.key_id = base64url(crypto::sha256("{\"e\":\"" + e + "\",\"kty\":\"RSA\",\"n\":\"" + n + "\"}"));
    out.jwk = {{"kty", "RSA"}, {"use", "sig"}, {"alg", "RS256"}, {"kid", out.key_id}, {"n", n}, {"e", e}};
    return out;
}

}  // namespace bai::identity
