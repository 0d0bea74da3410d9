// What a node's ssh server accepts, as the service's nodes' sshd did: the cluster's admin user
// with its password or its public key (nothing else), and, for port forwarding, targets on this
// machine's loopback only (the emulated nodes share it; anything further would make the emulator
// a way out of the machine).
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <optional>
#include <string>

struct ssh_key_struct;

namespace bai::node_login {

struct AdminAccount {
    std::string user;
    std::string password;    // empty: password logins refused
    std::string public_key;  // authorized_keys lines; empty: key logins refused
};

// The user and password given, compared in constant time (the lengths aside).
bool password_accepted(const AdminAccount& admin, const std::string& user, const std::string& password);
// Whether `offered` is one of the account's keys (its public part), for that user.
bool key_accepted(const AdminAccount& admin, const std::string& user, const ssh_key_struct* offered);

// The address a direct-tcpip channel to host:port connects to: localhost, 127.0.0.0/8 or ::1;
// nullopt for any other host (names are not resolved) or a port outside 1-65535.
struct ForwardTarget {
    sockaddr_storage address{};
    socklen_t size = 0;
};
std::optional<ForwardTarget> forward_target(const std::string& host, int port);

// What a client chose (a user name, a forward's host) as a log line shows it: quoted, escaped as
// JSON (a newline in it forges no line) and cut to 64 bytes.
std::string logged(const std::string& chosen);

}  // namespace bai::node_login
