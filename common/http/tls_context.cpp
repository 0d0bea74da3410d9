#include "common/http/tls_context.h"

#include <fcntl.h>
#include <openssl/err.h>
#include <poll.h>

#include <stdexcept>

namespace bai::http {

TlsContext new_server_tls() {
    TlsContext context(SSL_CTX_new(TLS_server_method()), SSL_CTX_free);
    if (!context) throw std::runtime_error("cannot create a TLS context");
    SSL_CTX_set_min_proto_version(context.get(), TLS1_2_VERSION);
    SSL_CTX_set_options(context.get(), SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
    // Partial writes are continued by the writer; a moving buffer is fine (std::string reuse).
    SSL_CTX_set_mode(context.get(), SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    return context;
}

TlsContext make_server_tls(const std::string& certificate_pem, const std::string& private_key_pem) {
    TlsContext context = new_server_tls();
    if (SSL_CTX_use_certificate_chain_file(context.get(), certificate_pem.c_str()) != 1) {
        throw std::runtime_error("cannot load the certificate " + certificate_pem);
    }
    if (SSL_CTX_use_PrivateKey_file(context.get(), private_key_pem.c_str(), SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(context.get()) != 1) {
        throw std::runtime_error("cannot load the private key " + private_key_pem);
    }
    return context;
}

SSL* accept_tls(SSL_CTX* context, int fd, std::chrono::steady_clock::time_point deadline) {
    SSL* ssl = SSL_new(context);
    if (ssl == nullptr) return nullptr;
    int flags = ::fcntl(fd, F_GETFL);
    ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
    SSL_set_fd(ssl, fd);
    bool done = false;
    for (;;) {
        ERR_clear_error();
        int rc = SSL_accept(ssl);
        if (rc == 1) {
            done = true;
            break;
        }
        int error = SSL_get_error(ssl, rc);
        if (error != SSL_ERROR_WANT_READ && error != SSL_ERROR_WANT_WRITE) break;
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) break;
        pollfd p{fd, static_cast<short>(error == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT), 0};
        if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
    }
    ::fcntl(fd, F_SETFL, flags);
    if (!done) {
        SSL_free(ssl);
        return nullptr;
    }
    return ssl;
}

}  // namespace bai::http
