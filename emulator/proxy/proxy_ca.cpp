#include "emulator/proxy/proxy_ca.h"

#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "common/http/loopback.h"
#include "common/text/ascii.h"
#include "emulator/tls/x509_building.h"

namespace bai::proxy {

const char* const kPermittedDnsNames[] = {
    "management.azure.com",       // ARM
    "batch.azure.com",            // ACCOUNT.REGION.batch.azure.com
    "core.windows.net",           // ACCOUNT.blob/file.core.windows.net
    "login.microsoftonline.com",  // the public cloud's sign-in authority and its other names
    "login.windows.net",
    "login.microsoft.com",
    "sts.windows.net",
};
const size_t kPermittedDnsNameCount = std::size(kPermittedDnsNames);

struct ProxyCa::Keys {
    tls::PkeyPtr ca_key;
    tls::X509Ptr ca_cert;
    tls::PkeyPtr leaf_key;  // one key for every name's certificate, made at each start
};

namespace {

constexpr long kDay = 24 * 3600;

std::string name_constraints() {
    std::string out = "critical";
    for (const char* name : kPermittedDnsNames) out += std::string(",permitted;DNS:") + name;
    // No e-mail address or URI at all (a name of the reserved .invalid domain matches none).
    return out + ",permitted;DNS:localhost,permitted;IP:127.0.0.0/255.0.0.0,"
                 "permitted;IP:::1/ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff,permitted;email:.invalid,permitted;URI:.invalid";
}

// A fresh CA: its own P-256 key, ten years, allowed to sign Azure's names and loopback only.
void make_ca(ProxyCa::Keys& keys) {
    keys.ca_key.reset(EVP_EC_gen("P-256"));
    if (!keys.ca_key) tls::fail("cannot generate the proxy CA's key");
    keys.ca_cert.reset(X509_new());
    X509* cert = keys.ca_cert.get();
    X509_set_version(cert, 2);
    tls::set_random_serial(cert);
    tls::set_validity(cert, 3600, 10L * 365 * kDay);
    X509_set_pubkey(cert, keys.ca_key.get());
    X509_NAME* name = X509_get_subject_name(cert);
    X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("Batch AI Emulator"), -1, -1, 0);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>("Batch AI Emulator proxy CA (local)"), -1, -1, 0);
    X509_set_issuer_name(cert, name);
    tls::add_extension(cert, cert, NID_basic_constraints, "critical,CA:TRUE,pathlen:0");
    tls::add_extension(cert, cert, NID_key_usage, "critical,keyCertSign,cRLSign");
    // Servers' certificates only, whatever else a leaked key would sign.
    tls::add_extension(cert, cert, NID_ext_key_usage, "serverAuth");
    tls::add_extension(cert, cert, NID_subject_key_identifier, "hash");
    tls::add_extension(cert, cert, NID_authority_key_identifier, "keyid:always");
    tls::add_extension(cert, cert, NID_name_constraints, name_constraints());
    if (X509_sign(cert, keys.ca_key.get(), EVP_sha256()) == 0) tls::fail("cannot sign the proxy CA");
}

bool usable(const ProxyCa::Keys& keys) {
    return keys.ca_cert && keys.ca_key && X509_check_private_key(keys.ca_cert.get(), keys.ca_key.get()) == 1 &&
           X509_cmp_time(X509_get0_notAfter(keys.ca_cert.get()), nullptr) > 0;
}

tls::X509Ptr issue(const ProxyCa::Keys& keys, const std::string& host) {
    tls::X509Ptr cert(X509_new());
    X509* c = cert.get();
    X509_set_version(c, 2);
    tls::set_random_serial(c);
    // Under the 398 days that clients allow a server certificate; made anew at each start.
    tls::set_validity(c, 3600, 397 * kDay);
    X509_set_pubkey(c, keys.leaf_key.get());
    X509_NAME* name = X509_get_subject_name(c);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(host.c_str()), -1, -1, 0);
    X509_set_issuer_name(c, X509_get_subject_name(keys.ca_cert.get()));
    X509* issuer = keys.ca_cert.get();
    tls::add_extension(c, issuer, NID_basic_constraints, "critical,CA:FALSE");
    tls::add_extension(c, issuer, NID_key_usage, "critical,digitalSignature");
    tls::add_extension(c, issuer, NID_ext_key_usage, "serverAuth");
    tls::add_extension(c, issuer, NID_subject_key_identifier, "hash");
    tls::add_extension(c, issuer, NID_authority_key_identifier, "keyid:always");
    tls::add_extension(c, issuer, NID_subject_alt_name, "DNS:" + host);
    if (X509_sign(c, keys.ca_key.get(), EVP_sha256()) == 0) tls::fail("cannot sign a certificate for " + host);
    return cert;
}

// A ClientHello that names another server than the tunnel's is refused; one that names none is
// served the tunnel's certificate.
int check_server_name(SSL* ssl, int* alert, void* expected) {
    const char* sent = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
    if (sent == nullptr) return SSL_TLSEXT_ERR_NOACK;
    if (!text::iequals(sent, *static_cast<const std::string*>(expected))) {
        *alert = SSL_AD_UNRECOGNIZED_NAME;
        return SSL_TLSEXT_ERR_ALERT_FATAL;
    }
    return SSL_TLSEXT_ERR_OK;
}


}  // namespace

bool ca_may_sign(const std::string& host) {
    const std::string name = text::lower(host);
    if (http::is_loopback_host(name)) return true;
    for (const char* permitted : kPermittedDnsNames) {
        const std::string_view p(permitted);
        if (name == p || (name.size() > p.size() && name.ends_with(p) && name[name.size() - p.size() - 1] == '.')) {
            return true;
        }
    }
    return false;
}

std::filesystem::path write_trust_bundle(const std::filesystem::path& dir, const ProxyCa& ca,
                                         const std::filesystem::path& arm_certificate) {
    auto read = [](const std::filesystem::path& path) {
        std::ifstream in(path, std::ios::binary);
        std::ostringstream text;
        text << in.rdbuf();
        std::string out = text.str();
        if (!out.empty() && out.back() != '\n') out += '\n';
        return out;
    };
    std::string bundle;
    for (const char* system : {"/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/cert.pem"}) {
        if (std::filesystem::exists(system)) {
            bundle = read(system);
            break;
        }
    }
    bundle += "# Batch AI Emulator proxy CA (Azure's host names through the proxy front door)\n" + ca.certificate_pem();
    bundle += "# Batch AI Emulator ARM endpoint\n" + read(arm_certificate);
    const std::filesystem::path path = dir / "ca-bundle.pem";
    std::filesystem::path tmp = path;
    tmp += ".tmp";
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out << bundle;
        if (!out.flush()) throw std::runtime_error("cannot write " + tmp.string());
    }
    std::filesystem::rename(tmp, path);
    return path;
}

ProxyCa::ProxyCa(const std::filesystem::path& dir, size_t cached_names)
    : certificate_path_(dir / "ca.pem"), keys_(new Keys), capacity_(std::max<size_t>(cached_names, 1)) {
    std::unique_ptr<Keys> keys(keys_);
    const std::filesystem::path key_path = dir / "ca-key.pem";
    std::filesystem::create_directories(dir);
    ::chmod(dir.c_str(), 0700);
    const bool has_key = std::filesystem::exists(key_path);
    const bool has_certificate = std::filesystem::exists(certificate_path_);
    if (has_key && has_certificate) {
        keys->ca_key = tls::load_private_key(key_path);
        keys->ca_cert = tls::load_certificate(certificate_path_);
        if (!keys->ca_key) throw std::runtime_error("cannot read the proxy CA's key " + key_path.string());
        if (!keys->ca_cert) throw std::runtime_error("cannot read the proxy CA's certificate " + certificate_path_.string());
        if (X509_check_private_key(keys->ca_cert.get(), keys->ca_key.get()) != 1) {
            throw std::runtime_error(key_path.string() + " is not the key of " + certificate_path_.string());
        }
    }
    if (!usable(*keys)) {  // none yet, half of one, or expired
        make_ca(*keys);
        tls::write_pem(key_path, 0600, keys->ca_key.get(), nullptr);
        tls::write_pem(certificate_path_, 0644, nullptr, keys->ca_cert.get());
    }
    keys->leaf_key.reset(EVP_EC_gen("P-256"));
    if (!keys->leaf_key) tls::fail("cannot generate the proxy's key");
    certificate_pem_ = tls::to_pem(keys->ca_cert.get());
    keys.release();
}

ProxyCa::~ProxyCa() { delete keys_; }

std::string ProxyCa::issue_pem(const std::string& host) {
    if (!ca_may_sign(host)) throw std::invalid_argument("the proxy CA may not sign " + host);
    return tls::to_pem(issue(*keys_, text::lower(host)).get());
}

http::TlsContext ProxyCa::make_context(const std::string& host) {
    http::TlsContext base = http::new_server_tls();
    tls::X509Ptr cert = issue(*keys_, host);
    if (SSL_CTX_use_certificate(base.get(), cert.get()) != 1 || SSL_CTX_use_PrivateKey(base.get(), keys_->leaf_key.get()) != 1) {
        tls::fail("cannot use the certificate made for " + host);
    }
    // The expected name lives as long as the context: the context's owner frees both.
    auto* expected = new std::string(host);
    SSL_CTX* raw = base.get();
    SSL_CTX_set_tlsext_servername_callback(raw, check_server_name);
    SSL_CTX_set_tlsext_servername_arg(raw, expected);
    return http::TlsContext(raw, [keep = std::move(base), expected](SSL_CTX*) mutable {
        keep.reset();
        delete expected;
    });
}

http::TlsContext ProxyCa::context_for(const std::string& host) {
    const std::string name = text::lower(host);
    {
        std::lock_guard lock(mutex_);
        if (auto it = by_name_.find(name); it != by_name_.end()) {
            recent_.splice(recent_.begin(), recent_, it->second);
            return it->second->second;
        }
    }
    if (!ca_may_sign(name)) throw std::invalid_argument("the proxy CA may not sign " + name);
    http::TlsContext made = make_context(name);  // outside the lock: a signature takes a while
    std::lock_guard lock(mutex_);
    if (auto it = by_name_.find(name); it != by_name_.end()) return it->second->second;  // made meanwhile
    recent_.emplace_front(name, made);
    by_name_[name] = recent_.begin();
    while (recent_.size() > capacity_) {
        by_name_.erase(recent_.back().first);
        recent_.pop_back();  // a tunnel still served by it keeps it until it ends
    }
    return made;
}

size_t ProxyCa::cached() const {
    std::lock_guard lock(mutex_);
    return recent_.size();
}

}  // namespace bai::proxy
