#include "emulator/engine/node_gateway.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <stdexcept>

#include "common/crypto/random_id.h"
#include "common/log/logger.h"
#include "common/text/ascii.h"

namespace bai::engine {
namespace {

constexpr std::uint32_t kMaxMessage = 1 << 20;  // a command line of up to 1 MiB

void write_all(int fd, const void* data, size_t size) {
    const char* p = static_cast<const char*>(data);
    while (size > 0) {
        ssize_t n = ::write(fd, p, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;  // the caller went away
        p += n;
        size -= static_cast<size_t>(n);
    }
}

// The message's fields, split at NUL: version, token, calling node, host, command.
std::vector<std::string> fields(const std::string& message) {
    std::vector<std::string> out;
    size_t start = 0;
    while (out.size() < 4) {
        size_t end = message.find('\0', start);
        if (end == std::string::npos) return {};
        out.push_back(message.substr(start, end - start));
        start = end + 1;
    }
    out.push_back(message.substr(start));
    return out;
}

bool same_secret(const std::string& a, const std::string& b) {
    if (a.size() != b.size()) return false;
    unsigned char diff = 0;
    for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
    return diff == 0;
}

}  // namespace

NodeGateway::NodeGateway(std::vector<Node> nodes, bool in_container)
    : nodes_(std::move(nodes)),
      in_container_(in_container),
      name_("@bai-node-gateway-" + crypto::random_hex(12)),
      token_(crypto::random_hex(24)) {
    for (const Node& n : nodes_) known_[n.address].insert(n.address);  // a node knows its own key
    listener_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listener_ < 0) throw std::runtime_error(std::string("node gateway: socket: ") + std::strerror(errno));
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path + 1, name_.data() + 1, name_.size() - 1);
    const socklen_t size = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name_.size());
    if (bind(listener_, reinterpret_cast<sockaddr*>(&address), size) != 0 || listen(listener_, 64) != 0 ||
        pipe2(wake_, O_CLOEXEC) != 0) {
        const std::string why = std::strerror(errno);
        close(listener_);
        throw std::runtime_error("node gateway: " + why);
    }
    acceptor_ = std::thread([this] { serve(); });
}

NodeGateway::~NodeGateway() { stop(); }

std::string NodeGateway::known_host_warning(const std::string& host, bool in_container) {
    // Appends throughout: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string here.
    std::string shown = in_container ? std::string("[").append(host).append("]:23") : host;
    return std::string("Warning: Permanently added '").append(shown).append("' (ECDSA) to the list of known hosts.\r\n");
}

void NodeGateway::stop() {
    if (stopping_.exchange(true)) {
        if (acceptor_.joinable()) acceptor_.join();
        return;
    }
    write_all(wake_[1], "x", 1);
    if (acceptor_.joinable()) acceptor_.join();
    std::vector<std::thread> calls;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        for (int group : running_) kill(-group, SIGKILL);
        calls.swap(calls_);
    }
    for (std::thread& t : calls) t.join();
    close(listener_);
    close(wake_[0]);
    close(wake_[1]);
}

void NodeGateway::serve() {
    for (;;) {
        pollfd fds[2] = {{listener_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            return;
        }
        if (fds[1].revents || stopping_) return;
        int connection = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
        if (connection < 0) continue;
        std::lock_guard<std::mutex> lock(mutex_);
        calls_.emplace_back([this, connection] { handle(connection); });
    }
}

const NodeGateway::Node* NodeGateway::find(const std::string& host, const std::string& from) const {
    const std::string wanted = (host == "localhost" || host == "127.0.0.1") ? from : host;
    for (const Node& n : nodes_) {
        if (n.address == wanted || text::iequals(n.id, wanted)) return &n;
    }
    return nullptr;
}

void NodeGateway::handle(int connection) {
    int fds[3] = {-1, -1, -1};
    auto finish = [&](std::int32_t status) {
        write_all(connection, &status, sizeof status);
        for (int fd : fds) {
            if (fd >= 0) close(fd);
        }
        close(connection);
    };
    ucred peer{};
    socklen_t length = sizeof peer;
    if (getsockopt(connection, SOL_SOCKET, SO_PEERCRED, &peer, &length) != 0 || peer.uid != geteuid()) {
        return finish(255);  // another user of the machine: nothing is run for it
    }
    // The size, the message and, with its first bytes, the caller's three descriptors.
    std::string buffer(4 + 65536, '\0');
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof fds)] = {};
    iovec io{buffer.data(), buffer.size()};
    msghdr header{};
    header.msg_iov = &io;
    header.msg_iovlen = 1;
    header.msg_control = control;
    header.msg_controllen = sizeof control;
    ssize_t got = recvmsg(connection, &header, MSG_CMSG_CLOEXEC);
    for (cmsghdr* c = CMSG_FIRSTHDR(&header); c; c = CMSG_NXTHDR(&header, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof fds)) {
            std::memcpy(fds, CMSG_DATA(c), sizeof fds);
        }
    }
    if (got < 4 || fds[0] < 0 || (header.msg_flags & MSG_CTRUNC)) return finish(255);
    std::uint32_t size = 0;
    std::memcpy(&size, buffer.data(), 4);
    if (size > kMaxMessage) return finish(255);
    std::string message = buffer.substr(4, static_cast<size_t>(got) - 4);
    while (message.size() < size) {
        char chunk[65536];
        ssize_t n = read(connection, chunk, std::min<size_t>(sizeof chunk, size - message.size()));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return finish(255);
        message.append(chunk, static_cast<size_t>(n));
    }
    message.resize(size);
    std::vector<std::string> f = fields(message);
    if (f.size() != 5 || f[0] != "bai-ssh-1" || !same_secret(f[1], token_)) return finish(255);
    const std::string& from = f[2];
    const Node* node = find(f[3], from);
    if (!node) return finish(kNotANode);
    {
        std::lock_guard<std::mutex> lock(mutex_);
        std::set<std::string>& known = known_[from];
        if (in_container_ || !known.count(node->address)) {
            const std::string warning = known_host_warning(f[3], in_container_);
            write_all(fds[2], warning.data(), warning.size());
            if (!in_container_) known.insert(node->address);
        }
    }
    finish(run(*node, f[4], fds));
}

int NodeGateway::run(const Node& node, const std::string& command, const int fds[3]) {
    // fork and exec by hand: the child's stdin, stdout and stderr are the caller's own descriptors.
    const std::string script = node.script.string();
    const std::string line = command.empty() ? "exec /bin/sh" : command;
    std::vector<char*> argv{const_cast<char*>(script.c_str()), const_cast<char*>(line.c_str()), nullptr};
    std::unique_lock<std::mutex> lock(mutex_);
    if (stopping_) return 255;
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        for (int i = 0; i < 3; ++i) dup2(fds[i], i);
        for (int fd = 3; fd < 1024; ++fd) close(fd);
        signal(SIGPIPE, SIG_DFL);
        execv(argv[0], argv.data());
        _exit(127);
    }
    if (pid < 0) return 255;
    setpgid(pid, pid);
    running_.insert(pid);
    lock.unlock();
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    lock.lock();
    running_.erase(pid);
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return 255;
}

}  // namespace bai::engine
