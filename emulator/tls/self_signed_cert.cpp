#include "emulator/tls/self_signed_cert.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <cstdio>
#include <memory>
#include <stdexcept>

#include "emulator/tls/x509_building.h"

namespace bai::tls {
namespace {

bool is_ip_address(const std::string& host) {
    ASN1_OCTET_STRING* ip = a2i_IPADDRESS(host.c_str());
    if (ip == nullptr) return false;
    ASN1_OCTET_STRING_free(ip);
    return true;
}

void generate(const CertificateFiles& files, const std::vector<std::string>& hosts) {
    PkeyPtr key(EVP_EC_gen("P-256"));
    if (!key) fail("cannot generate an EC key");

    X509Ptr cert(X509_new());
    X509_set_version(cert.get(), 2);
    set_random_serial(cert.get());
    set_validity(cert.get(), 3600, 10L * 365 * 24 * 3600);
    X509_set_pubkey(cert.get(), key.get());

    X509_NAME* name = X509_get_subject_name(cert.get());
    auto text = reinterpret_cast<const unsigned char*>("Batch AI Emulator (local)");
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, text, -1, -1, 0);
    X509_set_issuer_name(cert.get(), name);

    std::string san = "IP:127.0.0.1,IP:::1,DNS:localhost";
    for (const std::string& host : hosts) {
        if (host != "127.0.0.1" && host != "::1" && host != "localhost") {
            san += (is_ip_address(host) ? ",IP:" : ",DNS:") + host;
        }
    }
    // A self-signed certificate that clients use as their trust anchor: it must be a CA, and
    // strict verifiers (Python 3.13's default) also want key usage and key identifiers.
    add_extension(cert.get(), cert.get(), NID_basic_constraints, "critical,CA:TRUE,pathlen:0");
    add_extension(cert.get(), cert.get(), NID_key_usage, "critical,digitalSignature,keyCertSign");
    add_extension(cert.get(), cert.get(), NID_ext_key_usage, "serverAuth");
    add_extension(cert.get(), cert.get(), NID_subject_key_identifier, "hash");
    add_extension(cert.get(), cert.get(), NID_authority_key_identifier, "keyid:always");
    add_extension(cert.get(), cert.get(), NID_subject_alt_name, san);

    if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) fail("cannot sign");
    write_pem(files.private_key, 0600, key.get(), nullptr);
    write_pem(files.certificate, 0644, nullptr, cert.get());
}

}  // namespace

bool certificate_covers(const std::filesystem::path& path, const std::string& host) {
    X509Ptr cert = load_certificate(path);
    if (!cert) return false;
    if (X509_cmp_current_time(X509_get0_notAfter(cert.get())) <= 0) return false;
    if (is_ip_address(host)) return X509_check_ip_asc(cert.get(), host.c_str(), 0) == 1;
    return X509_check_host(cert.get(), host.c_str(), host.size(), 0, nullptr) == 1;
}

CertificateFiles ensure_certificate(const std::filesystem::path& dir, const std::vector<std::string>& hosts) {
    std::filesystem::create_directories(dir);
    CertificateFiles files{dir / "cert.pem", dir / "key.pem"};
    bool usable = std::filesystem::exists(files.private_key);
    for (const std::string& host : hosts) usable = usable && certificate_covers(files.certificate, host);
    if (!usable) generate(files, hosts);
    return files;
}

CertificateFiles ensure_certificate(const std::filesystem::path& dir, const std::string& host) {
    return ensure_certificate(dir, std::vector<std::string>{host});
}

}  // namespace bai::tls
