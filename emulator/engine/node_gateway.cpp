#include "emulator/engine/node_gateway.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <memory>
#include <system_error>
#include <cstddef>
#include <cstring>
#include <stdexcept>

#include "common/crypto/digest.h"
#include "common/crypto/random_id.h"
#include "common/log/logger.h"
#include "common/text/ascii.h"
#include "emulator/engine/session_child.h"

namespace bai::engine {

std::string node_script(const std::string& id, const std::string& address, const std::filesystem::path& cwd,
                        const Environment& env, const std::vector<std::string>& wrapper) {
    // Appends throughout: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string here.
    std::string script = "#!/bin/sh\n# Runs its argument on emulated node ";
    script.append(id).append(" (").append(address).append(").\n");
    if (!cwd.empty()) script.append("cd ").append(shell_quote(cwd.string())).append(" || exit 1\n");
    script.append("exec env -i");
    for (const auto& [name, value] : env) script.append(" ").append(shell_quote(std::string(name).append("=").append(value)));
    for (const std::string& word : wrapper) script.append(" ").append(shell_quote(word));
    script.append(" /bin/sh -c \"$1\"\n");
    return script;
}
namespace {

constexpr std::uint32_t kMaxMessage = 1 << 20;  // a command line of up to 1 MiB
constexpr size_t kMaxCalls = 256;                // calls at once, per job
constexpr const char* kVersion = "bai-ssh-2";

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

// The message's fields, split at NUL: version, token, calling node, host, flags, command.
std::vector<std::string> fields(const std::string& message) {
    std::vector<std::string> out;
    size_t start = 0;
    while (out.size() < 5) {
        size_t end = message.find('\0', start);
        if (end == std::string::npos) return {};
        out.push_back(message.substr(start, end - start));
        start = end + 1;
    }
    out.push_back(message.substr(start));
    return out;
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
    std::list<Call> calls;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        for (int group : running_) kill(-group, SIGKILL);
        for (int connection : connections_) shutdown(connection, SHUT_RDWR);  // a caller that sends nothing
        calls.swap(calls_);
    }
    for (Call& call : calls) call.thread.join();
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
        if (connection < 0) {
            if (errno == EMFILE || errno == ENFILE) std::this_thread::sleep_for(std::chrono::milliseconds(100));
            continue;
        }
        // A caller has 10 s to send its request.
        timeval timeout{10, 0};
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
        std::lock_guard<std::mutex> lock(mutex_);
        // Finished calls are joined here, so that a job calling ssh in a loop keeps no threads.
        for (auto it = calls_.begin(); it != calls_.end();) {
            if (*it->done) {
                it->thread.join();
                it = calls_.erase(it);
            } else {
                ++it;
            }
        }
        if (calls_.size() >= kMaxCalls) {
            close(connection);
            continue;
        }
        auto done = std::make_shared<std::atomic<bool>>(false);
        connections_.insert(connection);
        try {
            calls_.push_back({std::thread([this, connection, done] {
                                  handle(connection);
                                  *done = true;
                              }),
                              done});
        } catch (const std::system_error&) {
            connections_.erase(connection);
            close(connection);
        }
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
    std::vector<int> fds;
    auto refuse = [&](const char* why) {
        log::warning(std::string("node gateway ") + name_ + ": call refused: " + why);
        return kRefused;
    };
    auto finish = [&](std::int32_t status) {
        write_all(connection, &status, sizeof status);
        for (int fd : fds) close(fd);
        {
            std::lock_guard<std::mutex> lock(mutex_);
            connections_.erase(connection);
        }
        close(connection);
    };
    ucred peer{};
    socklen_t length = sizeof peer;
    // The emulator's own user, or root (a docker job's processes, which can read the emulator's
    // memory anyway); the token is the secret either way.
    if (getsockopt(connection, SOL_SOCKET, SO_PEERCRED, &peer, &length) != 0 || (peer.uid != geteuid() && peer.uid != 0)) {
        return finish(refuse("another user's process"));
    }
    // The size, the message and, with its first bytes, the caller's three descriptors.
    std::string buffer(4 + 65536, '\0');
    alignas(cmsghdr) char control[CMSG_SPACE(8 * sizeof(int))] = {};
    iovec io{buffer.data(), buffer.size()};
    msghdr header{};
    header.msg_iov = &io;
    header.msg_iovlen = 1;
    header.msg_control = control;
    header.msg_controllen = sizeof control;
    ssize_t got = recvmsg(connection, &header, MSG_CMSG_CLOEXEC);
    for (cmsghdr* c = got >= 0 ? CMSG_FIRSTHDR(&header) : nullptr; c; c = CMSG_NXTHDR(&header, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < count; ++i) {
            int fd = -1;
            std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
            fds.push_back(fd);
        }
    }
    if (got < 4 || fds.size() != 3 || (header.msg_flags & MSG_CTRUNC)) return finish(refuse("no request with three descriptors"));
    std::uint32_t size = 0;
    std::memcpy(&size, buffer.data(), 4);
    if (size > kMaxMessage) return finish(refuse("a request over 1 MiB"));
    std::string message = buffer.substr(4, static_cast<size_t>(got) - 4);
    while (message.size() < size) {
        char chunk[65536];
        ssize_t n = read(connection, chunk, std::min<size_t>(sizeof chunk, size - message.size()));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return finish(refuse("a request cut short"));
        message.append(chunk, static_cast<size_t>(n));
    }
    message.resize(size);
    std::vector<std::string> f = fields(message);
    if (f.size() != 6 || f[0] != kVersion) return finish(refuse("a malformed request"));
    if (!crypto::same_secret(f[1], token_)) return finish(refuse("not the job's token"));
    const std::string& from = f[2];
    const Node* node = find(f[3], from);
    if (!node) return finish(kNotANode);
    const bool quiet = f[4].find('q') != std::string::npos;
    std::string warning;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        std::set<std::string>& known = known_[from];
        if (in_container_ || !known.count(node->address)) {
            if (!quiet) warning = known_host_warning(f[3], in_container_);
            if (!in_container_) known.insert(node->address);
        }
    }
    finish(run(*node, f[5], fds.data(), warning, connection));
}

int NodeGateway::run(const Node& node, const std::string& command, const int fds[3], const std::string& warning,
                     int connection) {
    // The child's stdin, stdout and stderr are the caller's own descriptors.
    const std::string script = node.script.string();
    const std::string line = command.empty() ? "exec /bin/sh" : command;
    std::vector<char*> argv{const_cast<char*>(script.c_str()), const_cast<char*>(line.c_str()), nullptr};
    std::unique_lock<std::mutex> lock(mutex_);
    if (stopping_) return kRefused;
    // The warning comes from the node itself, before the command.
    const pid_t pid = spawn_in_own_session(argv.data(), fds, false, warning);
    if (pid < 0) return kRefused;
    running_.insert(pid);
    lock.unlock();
    // Until the command ends, or its caller goes away (ssh killed, a timeout): then it is hung up
    // on as OpenSSH's session would be, and killed if it stays.
    const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
    if (pidfd >= 0) {
        bool hung_up = false;
        for (;;) {
            pollfd p[2] = {{pidfd, POLLIN, 0}, {connection, POLLRDHUP, 0}};
            int n = poll(p, hung_up ? 1 : 2, hung_up ? 2000 : -1);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0 || p[0].revents) break;
            if (hung_up && n == 0) {
                kill(-pid, SIGKILL);
                continue;
            }
            if (!hung_up && (p[1].revents & (POLLRDHUP | POLLHUP | POLLERR))) {
                hung_up = true;
                kill(-pid, SIGHUP);
            }
        }
        close(pidfd);
    }
    // Reaped only after it leaves running_: stop() never kills a group whose number was reused.
    siginfo_t info{};
    int waited;
    while ((waited = waitid(P_PID, pid, &info, WEXITED | WNOWAIT)) < 0 && errno == EINTR) {
    }
    lock.lock();
    running_.erase(pid);
    lock.unlock();
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (waited < 0) return kRefused;
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return kRefused;
}

}  // namespace bai::engine
