// TLS for the lean listener: a server context from a PEM certificate and key (TLS 1.2 and later),
// and the handshake of one accepted connection under a deadline, so that a client that sends its
// ClientHello a byte at a time holds nothing but its own connection, and not for long.
#pragma once

#include <openssl/ssl.h>

#include <chrono>
#include <memory>
#include <string>

namespace bai::http {

using TlsContext = std::shared_ptr<SSL_CTX>;

// A server context with the settings every listener uses (TLS 1.2 and later, no compression or
// renegotiation) and no certificate yet. Throws std::runtime_error when none can be made.
TlsContext new_server_tls();

// Throws std::runtime_error naming the file when the certificate or key cannot be used.
TlsContext make_server_tls(const std::string& certificate_pem, const std::string& private_key_pem);

// Runs the server side of the handshake on `fd` (a blocking socket, left blocking) until
// `deadline`. Returns the session, or null when the client failed, went away or was too slow.
SSL* accept_tls(SSL_CTX* context, int fd, std::chrono::steady_clock::time_point deadline);

}  // namespace bai::http
