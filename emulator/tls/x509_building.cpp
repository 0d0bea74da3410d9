#include "emulator/tls/x509_building.h"

#include <openssl/bn.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <stdexcept>

namespace bai::tls {

void fail(const std::string& what) { throw std::runtime_error("TLS certificate: " + what); }

void add_extension(X509* cert, X509* issuer, int nid, const std::string& value) {
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
    if (ext == nullptr) fail("cannot build extension " + value);
    X509_add_ext(cert, ext, -1);
    X509_EXTENSION_free(ext);
}

void set_random_serial(X509* cert) {
    unsigned char serial[16];
    if (RAND_bytes(serial, sizeof serial) != 1) fail("no random serial number");
    serial[0] &= 0x7f;
    BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
    BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert));
    BN_free(bn);
}

void set_validity(X509* cert, long before_seconds, long seconds) {
    X509_gmtime_adj(X509_getm_notBefore(cert), -before_seconds);
    X509_gmtime_adj(X509_getm_notAfter(cert), seconds);
}

X509Ptr load_certificate(const std::filesystem::path& path) {
    FilePtr file(std::fopen(path.c_str(), "r"));
    if (!file) return nullptr;
    return X509Ptr(PEM_read_X509(file.get(), nullptr, nullptr, nullptr));
}

PkeyPtr load_private_key(const std::filesystem::path& path) {
    FilePtr file(std::fopen(path.c_str(), "r"));
    if (!file) return nullptr;
    return PkeyPtr(PEM_read_PrivateKey(file.get(), nullptr, nullptr, nullptr));
}

void write_pem(const std::filesystem::path& path, mode_t mode, EVP_PKEY* key, X509* cert) {
    std::filesystem::path tmp = path;
    tmp += ".tmp";
    std::filesystem::remove(tmp);  // a leftover of another mode would keep it
    FilePtr file(std::fopen(tmp.c_str(), "w"));
    if (!file) fail("cannot write " + tmp.string());
    ::chmod(tmp.c_str(), mode);
    bool ok = key != nullptr
                  ? PEM_write_PrivateKey(file.get(), key, nullptr, nullptr, 0, nullptr, nullptr)
                  : PEM_write_X509(file.get(), cert);
    if (!ok || std::fflush(file.get()) != 0) fail("cannot write " + tmp.string());
    file.reset();
    std::filesystem::rename(tmp, path);
}

std::string to_pem(X509* cert) {
    BIO* bio = BIO_new(BIO_s_mem());
    PEM_write_bio_X509(bio, cert);
    char* data = nullptr;
    long size = BIO_get_mem_data(bio, &data);
    std::string pem(data, static_cast<size_t>(size));
    BIO_free(bio);
    return pem;
}

}  // namespace bai::tls
