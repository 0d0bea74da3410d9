#include "emulator/node_login/login_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <libssh/libssh.h>
#include <libssh/server.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <set>
#include <stdexcept>
#include <vector>

#include "common/http/loopback.h"
#include "common/log/logger.h"
#include "emulator/node_login/login_connection.h"

namespace bai::node_login {

namespace {

constexpr size_t kMaxConnections = 256;  // at once, over all nodes
// Of those, not logged in yet (sshd's MaxStartups): clients that never log in cannot take every
// place, nor a thread each beyond these.
constexpr size_t kMaxNotLoggedIn = 32;

// A listening socket on address:0 (the kernel's port); -1 with the reason in `why`.
int listen_on(const std::string& address, int& port, std::string& why) {
    sockaddr_in in{};
    in.sin_family = AF_INET;
    if (inet_pton(AF_INET, address.c_str(), &in.sin_addr) != 1) {
        why = "not an IPv4 address";
        return -1;
    }
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        why = std::strerror(errno);
        return -1;
    }
    socklen_t size = sizeof in;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&in), size) != 0 || ::listen(fd, 64) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&in), &size) != 0) {
        why = std::strerror(errno);
        ::close(fd);
        return -1;
    }
    port = ntohs(in.sin_port);
    return fd;
}

}  // namespace

LoginServer::LoginServer(const std::filesystem::path& host_key) {
    ssh_init();
    bind_ = ssh_bind_new();
    if (!bind_) throw std::runtime_error("libssh: cannot make a server");
    // The system's libssh server configuration is not read: the emulator's nodes behave the same
    // on every machine.
    bool no = false;
    ssh_key key = nullptr;
    if (ssh_bind_options_set(bind_, SSH_BIND_OPTIONS_PROCESS_CONFIG, &no) != SSH_OK ||
        ssh_pki_import_privkey_file(host_key.c_str(), nullptr, nullptr, nullptr, &key) != SSH_OK ||
        ssh_bind_options_set(bind_, SSH_BIND_OPTIONS_IMPORT_KEY, key) != SSH_OK) {  // (it takes the key)
        ssh_key_free(key);
        ssh_bind_free(bind_);
        throw std::runtime_error("libssh: cannot take the host key " + host_key.string());
    }
    if (pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) {
        ssh_bind_free(bind_);
        throw std::runtime_error(std::string("node logins: ") + std::strerror(errno));
    }
    acceptor_ = std::thread([this] { serve(); });
}

LoginServer::~LoginServer() {
    stop();
    ssh_bind_free(bind_);
    ::close(wake_[0]);
    ::close(wake_[1]);
}

void LoginServer::wake() {
    if (::write(wake_[1], "x", 1) < 0) {
    }  // (full: it is awake already)
}

void LoginServer::set_nodes(std::vector<engine::LoginNode> nodes) {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    std::set<std::string> listed;
    for (engine::LoginNode& node : nodes) {
        listed.insert(node.node_id);
        auto it = listeners_.find(node.node_id);
        if (it != listeners_.end() && it->second.node->address == node.address) continue;
        if (it != listeners_.end()) {  // moved (a Slurm node placed on its host): a new socket
            retired_.push_back(it->second.fd);
            listeners_.erase(it);
        }
        // A node on a host of another machine is reached through this machine's loopback.
        const std::string address = http::is_loopback_host(node.address) && node.address != "localhost" && node.address != "::1"
                                        ? node.address
                                        : "127.0.0.1";
        std::string why;
        int port = 0;
        const int fd = listen_on(address, port, why);
        if (fd < 0) {
            log::warning("node " + node.node_id + ": no ssh server at " + address + ": " + why);
            continue;
        }
        const std::string id = node.node_id;
        listeners_[id] = Listener{std::make_shared<const engine::LoginNode>(std::move(node)), fd, Endpoint{address, port}};
    }
    for (auto it = listeners_.begin(); it != listeners_.end();) {
        if (listed.count(it->first)) {
            ++it;
            continue;
        }
        // Gone: no new connection (refused from now on), and its logins end.
        ::shutdown(it->second.fd, SHUT_RDWR);
        retired_.push_back(it->second.fd);
        for (Running& r : running_) {
            if (r.connection->node_id() == it->first) r.connection->end();
        }
        it = listeners_.erase(it);
    }
    wake();
}

std::optional<engine::NodeLogins::Endpoint> LoginServer::endpoint(const std::string& node_id) const {
    std::lock_guard lock(mutex_);
    auto it = listeners_.find(node_id);
    if (it == listeners_.end()) return std::nullopt;
    return it->second.endpoint;
}

void LoginServer::stop() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
        for (auto& [id, listener] : listeners_) retired_.push_back(listener.fd);
        listeners_.clear();
        for (Running& r : running_) r.connection->end();
    }
    wake();
    if (acceptor_.joinable()) acceptor_.join();
    std::list<Running> running;
    {
        std::lock_guard lock(mutex_);
        running.swap(running_);
    }
    for (Running& r : running) {
        r.connection->end();
        if (r.thread.joinable()) r.thread.join();
    }
}

void LoginServer::serve() {
    for (;;) {
        std::vector<pollfd> polled{{wake_[0], POLLIN, 0}};
        std::vector<std::string> ids{""};
        {
            std::lock_guard lock(mutex_);
            for (int fd : retired_) ::close(fd);
            retired_.clear();
            if (stopping_) return;
            // Finished connections are joined here, so that many short logins keep no threads.
            for (auto it = running_.begin(); it != running_.end();) {
                if (it->connection->finished()) {
                    it->thread.join();
                    it = running_.erase(it);
                } else {
                    ++it;
                }
            }
            for (auto& [id, listener] : listeners_) {
                polled.push_back({listener.fd, POLLIN, 0});
                ids.push_back(id);
            }
        }
        // Woken by a change of the nodes, a connection, or every second to join finished ones.
        int n = ::poll(polled.data(), polled.size(), 1000);
        if (n < 0 && errno != EINTR) return;
        if (polled[0].revents) {
            char drain[64];
            while (::read(wake_[0], drain, sizeof drain) > 0) {
            }
        }
        for (size_t i = 1; i < polled.size(); ++i) {
            if (!(polled[i].revents & POLLIN)) continue;
            std::lock_guard lock(mutex_);
            auto it = listeners_.find(ids[i]);
            if (it == listeners_.end() || it->second.fd != polled[i].fd || stopping_) continue;
            accept_on(it->second);
        }
    }
}

// Under the lock: the node and its socket stay as they are while the connection starts.
void LoginServer::accept_on(const Listener& listener) {
    const int fd = ::accept4(listener.fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
        if (errno == EMFILE || errno == ENFILE) log::warning("node logins: " + std::string(std::strerror(errno)));
        return;
    }
    size_t not_logged_in = 0;
    for (const Running& r : running_) {
        if (!r.connection->finished() && !r.connection->logged_in()) ++not_logged_in;
    }
    if (running_.size() >= kMaxConnections || not_logged_in >= kMaxNotLoggedIn) {
        ::close(fd);
        return;
    }
    ssh_session session = ssh_new();
    // (On this thread, one at a time: libssh copies the host key and options from the bind here.)
    if (!session || ssh_bind_accept_fd(bind_, session, fd) != SSH_OK) {
        // Closed once: by the session where it took the socket already, else here.
        const bool owned = session && ssh_get_fd(session) == fd;
        if (session) ssh_free(session);
        if (!owned) ::close(fd);
        return;
    }
    auto connection = std::make_shared<LoginConnection>(session, fd, listener.node);
    try {
        running_.push_back({connection, std::thread([connection] { connection->serve(); })});
    } catch (const std::system_error&) {
        connection->end();  // (never served: its destructor frees nothing of libssh's; the session leaks)
    }
}

}  // namespace bai::node_login
