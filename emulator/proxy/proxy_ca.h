// The certificate authority of the proxy front door: made for this purpose alone on first start
// (DIR/proxy/ca.pem, its key DIR/proxy/ca-key.pem with mode 0600; never the ARM endpoint's key),
// with X.509 name constraints that let it sign Azure's host names and loopback and nothing else,
// so that a client told to trust it trusts it for those names only. It issues each host name a
// certificate of its own when a tunnel to that name is first opened, and keeps the TLS contexts of
// the names most recently served.
#pragma once

#include <cstddef>
#include <filesystem>
#include <list>
#include <mutex>
#include <string>
#include <unordered_map>

#include "common/http/tls_context.h"

namespace bai::proxy {

// The DNS names (each with every name below it) and addresses the CA may sign.
extern const char* const kPermittedDnsNames[];
extern const size_t kPermittedDnsNameCount;

class ProxyCa {
public:
    // Loads the CA from `dir`, making one when none is there (or it has expired). Throws
    // std::runtime_error naming the file when one is there and cannot be used.
    explicit ProxyCa(const std::filesystem::path& dir, size_t cached_names = 512);
    ~ProxyCa();
    ProxyCa(const ProxyCa&) = delete;
    ProxyCa& operator=(const ProxyCa&) = delete;

    const std::filesystem::path& certificate_path() const { return certificate_path_; }
    // The CA's certificate, PEM.
    const std::string& certificate_pem() const { return certificate_pem_; }

    // The server context for `host` (a DNS name the CA may sign, lower-case): its certificate names
    // `host` alone, chained to the CA. A ClientHello whose server name is another is refused with
    // an unrecognized_name alert; one with none is served `host`'s. Made on first use, kept among
    // the `cached_names` most recently used.
    http::TlsContext context_for(const std::string& host);
    // How many contexts are kept now (memory stays bounded however many names are served).
    size_t cached() const;
    // A PEM certificate for `host`, as context_for() serves it (for tests).
    std::string issue_pem(const std::string& host);

    struct Keys;

private:
    http::TlsContext make_context(const std::string& host);

    std::filesystem::path certificate_path_;
    std::string certificate_pem_;
    Keys* keys_;
    size_t capacity_;
    mutable std::mutex mutex_;
    std::list<std::pair<std::string, http::TlsContext>> recent_;  // most recent first
    std::unordered_map<std::string, std::list<std::pair<std::string, http::TlsContext>>::iterator> by_name_;
};

// Writes DIR/ca-bundle.pem (atomically): the system's CAs (the first of the usual bundle files that
// exists), the proxy's CA and `arm_certificate`, so that one REQUESTS_CA_BUNDLE (SSL_CERT_FILE,
// CURL_CA_BUNDLE, NODE_EXTRA_CA_CERTS) lets a client reach the cloud's other hosts as before, Azure's
// through the proxy, and the ARM endpoint directly. Returns its path.
std::filesystem::path write_trust_bundle(const std::filesystem::path& dir, const ProxyCa& ca,
                                         const std::filesystem::path& arm_certificate);

// Whether a certificate from this CA may name `host`: within kPermittedDnsNames, "localhost" or a
// loopback address (what the name constraints allow; the front door serves fewer).
bool ca_may_sign(const std::string& host);

}  // namespace bai::proxy
