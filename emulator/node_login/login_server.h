// The nodes' ssh servers: one listening socket per emulated node, on the node's own loopback
// address (127.0.1.N) and a port of the kernel's choosing, which listRemoteLoginInformation
// reports. libssh serves the protocol; each connection runs on a thread of its own
// (login_connection.h). A node that leaves closes its socket (a new connection is refused) and
// ends its connections (their commands are hung up on, as when a VM goes away).
#pragma once

#include <atomic>
#include <filesystem>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "emulator/engine/node_logins.h"

struct ssh_bind_struct;

namespace bai::node_login {

class LoginConnection;

class LoginServer : public engine::NodeLogins {
public:
    // `host_key`: ensure_host_key's file. Throws std::runtime_error when libssh cannot take it.
    explicit LoginServer(const std::filesystem::path& host_key);
    ~LoginServer() override;
    LoginServer(const LoginServer&) = delete;
    LoginServer& operator=(const LoginServer&) = delete;

    void set_nodes(std::vector<engine::LoginNode> nodes) override;
    std::optional<Endpoint> endpoint(const std::string& node_id) const override;

    // Closes every socket and ends every connection; returns when their threads have.
    void stop();

private:
    struct Listener {
        std::shared_ptr<const engine::LoginNode> node;
        int fd = -1;
        Endpoint endpoint;
    };
    struct Running {
        std::shared_ptr<LoginConnection> connection;
        std::thread thread;
    };
    void serve();
    void accept_on(const Listener& listener);
    void wake();

    ssh_bind_struct* bind_ = nullptr;
    mutable std::mutex mutex_;
    std::map<std::string, Listener> listeners_;  // by node id
    std::vector<int> retired_;                   // listeners of nodes gone, closed by the acceptor
    std::list<Running> running_;
    int wake_[2] = {-1, -1};
    std::atomic<bool> stopping_{false};
    std::thread acceptor_;
};

}  // namespace bai::node_login
