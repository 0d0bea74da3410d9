// One ssh connection to a node, served with libssh on a thread of its own: the key exchange
// (the emulator's host key), authentication as the cluster's admin user (login_rules.h), then
// channels: `session` (a command or a login shell, with a terminal when asked, its exit status
// sent back) and `direct-tcpip` (a TCP connection to a loopback port, as ssh -L and az's tunnel
// open them). Nothing else: no remote forwarding, agent, X11 or subsystems.
#pragma once

#include <atomic>
#include <list>
#include <memory>
#include <mutex>
#include <string>

#include "emulator/engine/node_logins.h"
#include "emulator/node_login/login_rules.h"

struct ssh_session_struct;
struct ssh_event_struct;
struct ssh_message_struct;

namespace bai::node_login {

class LoginConnection {
public:
    // `session` was accepted on its socket (ssh_bind_accept_fd), before the key exchange; the
    // connection owns it and the socket from now on.
    LoginConnection(ssh_session_struct* session, int socket, std::shared_ptr<const engine::LoginNode> node);
    ~LoginConnection();
    LoginConnection(const LoginConnection&) = delete;
    LoginConnection& operator=(const LoginConnection&) = delete;

    // Serves until the client leaves, fails to log in in time, or end() is called; then hangs
    // up on what its commands still run and closes the connection.
    void serve();
    // From any thread: the connection ends soon (the node left, the emulator stops).
    void end();
    bool finished() const { return finished_; }
    // Whether the client has logged in (a connection that has not counts against the server's
    // smaller cap on those, as sshd's MaxStartups).
    bool logged_in() const { return authenticated_; }
    const std::string& node_id() const { return node_->node_id; }

    struct Channel;  // (public for libssh's C callbacks)
    // libssh's callbacks, each with this connection or one of its channels.
    int on_password(const char* user, const char* password);
    int on_public_key(const char* user, ssh_key_struct* key, char signature_state);
    void* on_session_channel();
    int on_message(ssh_message_struct* message);
    // An exec or shell request: the command starts on the node; false when it cannot.
    bool start(Channel& channel, const std::string& command);

private:
    void tend();
    void hang_up(Channel& channel);
    // The channel's descriptors in the poll, with the events they wait for now.
    void watch(Channel& channel);
    void close_fd(Channel& channel, int fd);
    void close_everything();

    ssh_session_struct* session_;
    std::mutex socket_mutex_;
    int socket_;
    std::shared_ptr<const engine::LoginNode> node_;
    AdminAccount admin_;
    ssh_event_struct* event_ = nullptr;
    int wake_[2] = {-1, -1};
    std::atomic<bool> ending_{false};
    std::atomic<bool> finished_{false};
    std::atomic<bool> authenticated_{false};
    int failures_ = 0;
    int steps_ = 0;  // commands started, naming each one's Slurm step
    std::list<std::unique_ptr<Channel>> channels_;
};

}  // namespace bai::node_login
