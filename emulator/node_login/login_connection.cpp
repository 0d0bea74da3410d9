#include "emulator/node_login/login_connection.h"

#include <fcntl.h>
#include <libssh/callbacks.h>
#include <libssh/libssh.h>
#include <libssh/server.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

#include "common/log/logger.h"
#include "emulator/engine/cpu_affinity.h"
#include "emulator/node_login/login_command.h"

namespace bai::node_login {

namespace {

constexpr int kMaxAuthTries = 6;                    // sshd's MaxAuthTries
constexpr auto kLoginGrace = std::chrono::seconds(30);  // to log in (sshd gives 120 s)
constexpr size_t kMaxChannels = 64;                 // open at once on one connection
constexpr size_t kChunk = 32768;

constexpr int kConnectTimeoutMs = 10000;     // a forward's target to accept (a full backlog drops SYNs)

void set_nonblocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

// A connected (blocking) socket to the target, or -1 with errno: the connection's other channels
// wait while it connects, so not for long.
int connect_within(const ForwardTarget& to, int timeout_ms) {
    const int fd = ::socket(to.address.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return -1;
    int error = 0;
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&to.address), to.size) != 0) {
        error = errno;
        if (error == EINPROGRESS) {
            pollfd p{fd, POLLOUT, 0};
            int n;
            while ((n = ::poll(&p, 1, timeout_ms)) < 0 && errno == EINTR) {
            }
            socklen_t size = sizeof error;
            if (n == 0) {
                error = ETIMEDOUT;
            } else if (n < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size) != 0) {
                error = errno;
            }
        }
    }
    if (error != 0) {
        ::close(fd);
        errno = error;
        return -1;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return fd;
}

// Writes all of it (a blocking descriptor); false when the reader has gone.
bool write_all(int fd, const char* data, size_t size, bool socket) {
    while (size > 0) {
        ssize_t n = socket ? ::send(fd, data, size, MSG_NOSIGNAL) : ::write(fd, data, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        data += n;
        size -= static_cast<size_t>(n);
    }
    return true;
}

}  // namespace

struct LoginConnection::Channel {
    LoginConnection* owner = nullptr;
    ssh_channel channel = nullptr;
    ssh_channel_callbacks_struct callbacks{};
    bool forward = false;
    // A session: its terminal, if asked for, and its command's descriptors and process.
    bool pty = false;
    std::string term;
    winsize size{};
    int input = -1;   // the command's stdin (the terminal's master with a pty)
    int output = -1;  // its stdout (the same master with a pty)
    int errors = -1;  // its stderr (none with a pty: the terminal has both)
    pid_t pid = -1;
    int pidfd = -1;
    bool exit_seen = false;  // its pidfd became readable
    // A forward: the TCP connection to its target.
    int socket = -1;
    bool target_done = false;  // the target closed its side
    bool client_done = false;  // the client sent EOF
    // Either kind: the client closed the channel; its command was hung up on; it is over (its
    // descriptors are closed and it goes at the next tend()).
    bool closed_by_client = false;
    bool hung_up = false;
    bool over = false;
    std::vector<int> done_streams;  // at their end: out of the poll at the next tend()
};

namespace {

using Channel = LoginConnection::Channel;

// ---- libssh's C callbacks ----

int password_callback(ssh_session, const char* user, const char* password, void* self) {
    return static_cast<LoginConnection*>(self)->on_password(user, password);
}

int public_key_callback(ssh_session, const char* user, ssh_key_struct* key, char state, void* self) {
    return static_cast<LoginConnection*>(self)->on_public_key(user, key, state);
}

ssh_channel session_channel_callback(ssh_session, void* self) {
    return static_cast<ssh_channel>(static_cast<LoginConnection*>(self)->on_session_channel());
}

int message_callback(ssh_session, ssh_message message, void* self) {
    return static_cast<LoginConnection*>(self)->on_message(message);
}

int pty_callback(ssh_session, ssh_channel, const char* term, int columns, int rows, int width, int height, void* data) {
    auto* ch = static_cast<Channel*>(data);
    if (ch->pid > 0) return SSH_ERROR;
    ch->pty = true;
    ch->term = term ? term : "";
    ch->size = {static_cast<unsigned short>(rows), static_cast<unsigned short>(columns), static_cast<unsigned short>(width),
                static_cast<unsigned short>(height)};
    return SSH_OK;
}

int window_callback(ssh_session, ssh_channel, int columns, int rows, int width, int height, void* data) {
    auto* ch = static_cast<Channel*>(data);
    ch->size = {static_cast<unsigned short>(rows), static_cast<unsigned short>(columns), static_cast<unsigned short>(width),
                static_cast<unsigned short>(height)};
    if (ch->pty && ch->input >= 0) ioctl(ch->input, TIOCSWINSZ, &ch->size);
    return SSH_OK;
}

// Moves what one of the command's streams (or the forward's target) has to the client: true when
// something moved; at its end the stream is marked done (removed from the poll by tend()).
bool pump(Channel& ch, int fd) {
    char buffer[kChunk];
    ssize_t n = ch.forward ? ::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT) : ::read(fd, buffer, sizeof buffer);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return false;
    if (n <= 0) {  // EOF, or EIO on a terminal whose processes have all gone
        if (ch.forward) ch.target_done = true;
        ch.done_streams.push_back(fd);
        return false;
    }
    if (ch.closed_by_client || ch.over) return true;  // read and dropped: nobody wants it
    if (fd == ch.errors) {
        ssh_channel_write_stderr(ch.channel, buffer, static_cast<uint32_t>(n));
    } else {
        ssh_channel_write(ch.channel, buffer, static_cast<uint32_t>(n));
    }
    return true;
}

int output_ready(socket_t fd, int revents, void* data) {
    auto* ch = static_cast<Channel*>(data);
    if (revents & (POLLIN | POLLHUP | POLLERR)) pump(*ch, fd);
    return 0;
}

int exited(socket_t, int, void* data) {
    static_cast<Channel*>(data)->exit_seen = true;
    return 0;
}

int data_callback(ssh_session, ssh_channel, void* data, uint32_t size, int, void* user) {
    auto* ch = static_cast<Channel*>(user);
    const int fd = ch->forward ? ch->socket : ch->input;
    if (fd < 0) return static_cast<int>(size);  // nobody reads it: dropped, as sshd drops it
    if (!write_all(fd, static_cast<const char*>(data), size, ch->forward)) {
        if (ch->forward) ch->target_done = true;
    }
    return static_cast<int>(size);
}

void eof_callback(ssh_session, ssh_channel, void* user) {
    auto* ch = static_cast<Channel*>(user);
    ch->client_done = true;
    if (ch->forward && ch->socket >= 0) {
        ::shutdown(ch->socket, SHUT_WR);
    } else if (!ch->pty && ch->input >= 0) {
        ::close(ch->input);  // the command reads EOF
        ch->input = -1;
    }
}

void close_callback(ssh_session, ssh_channel, void* user) { static_cast<Channel*>(user)->closed_by_client = true; }

// ---- starting a command ----

struct Started {
    pid_t pid = -1;
    int input = -1, output = -1, errors = -1;
};

Started start_command(const std::vector<std::string>& argv, bool pty, const winsize& size) {
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    int master = -1, slave = -1;
    int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
    if (pty) {
        winsize copy = size;
        if (copy.ws_row == 0 && copy.ws_col == 0) copy = {24, 80, 0, 0};
        if (openpty(&master, &slave, nullptr, nullptr, &copy) != 0) return {};
        fcntl(master, F_SETFD, FD_CLOEXEC);
    } else if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
        for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) {
            if (fd >= 0) ::close(fd);
        }
        return {};
    }
    const std::optional<cpu_set_t> cpus = engine::children_cpus();  // (read before the fork: no lock in the child)
    pid_t pid = fork();
    if (pid == 0) {
        // A session of its own (killed as a group, the terminal its controlling one), no signal
        // blocked, nothing of the emulator's open, every CPU the emulator was given.
        setsid();
        if (cpus) sched_setaffinity(0, sizeof *cpus, &*cpus);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        signal(SIGPIPE, SIG_DFL);
        if (pty) {
            ioctl(slave, TIOCSCTTY, 0);
            for (int i = 0; i < 3; ++i) dup2(slave, i);
        } else {
            dup2(in[0], 0);
            dup2(out[1], 1);
            dup2(err[1], 2);
        }
        close_range(3, ~0U, 0);
        execv(args[0], args.data());
        _exit(127);
    }
    Started started;
    if (pty) {
        ::close(slave);
        if (pid < 0) {
            ::close(master);
            return {};
        }
        started = {pid, master, master, -1};
    } else {
        ::close(in[0]);
        ::close(out[1]);
        ::close(err[1]);
        if (pid < 0) {
            for (int fd : {in[1], out[0], err[0]}) ::close(fd);
            return {};
        }
        started = {pid, in[1], out[0], err[0]};
    }
    set_nonblocking(started.output);
    if (started.errors >= 0) set_nonblocking(started.errors);
    return started;
}

}  // namespace

// ---- the connection ----

LoginConnection::LoginConnection(ssh_session session, int socket, std::shared_ptr<const engine::LoginNode> node)
    : session_(session), socket_(socket), node_(std::move(node)), admin_{node_->user, node_->password, node_->public_key} {
    if (pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) wake_[0] = wake_[1] = -1;
}

LoginConnection::~LoginConnection() {
    if (session_) ssh_free(session_);  // never served
    for (int fd : wake_) {
        if (fd >= 0) ::close(fd);
    }
}

void LoginConnection::end() {
    ending_ = true;
    if (wake_[1] >= 0 && ::write(wake_[1], "x", 1) < 0) {
    }
    // A client still in its key exchange is waited on in libssh's own poll: cut it short.
    std::lock_guard lock(socket_mutex_);
    if (socket_ >= 0) ::shutdown(socket_, SHUT_RDWR);
}

int LoginConnection::on_password(const char* user, const char* password) {
    if (password_accepted(admin_, user ? user : "", password ? password : "")) {
        authenticated_ = true;
        log::info("node " + node_->node_id + ": " + admin_.user + " logged in with a password");
        return SSH_AUTH_SUCCESS;
    }
    ++failures_;
    log::info(std::string("node ") + node_->node_id + ": login refused for " + (user ? user : "") + " (password)");
    return SSH_AUTH_DENIED;
}

int LoginConnection::on_public_key(const char* user, ssh_key_struct* key, char signature_state) {
    const bool known = key_accepted(admin_, user ? user : "", key);
    if (signature_state == SSH_PUBLICKEY_STATE_NONE) {  // "would this key do?": only the account's
        if (known) return SSH_AUTH_SUCCESS;
        ++failures_;
        return SSH_AUTH_DENIED;
    }
    if (known && signature_state == SSH_PUBLICKEY_STATE_VALID) {
        authenticated_ = true;
        log::info("node " + node_->node_id + ": " + admin_.user + " logged in with a key");
        return SSH_AUTH_SUCCESS;
    }
    ++failures_;
    log::info(std::string("node ") + node_->node_id + ": login refused for " + (user ? user : "") + " (key)");
    return SSH_AUTH_DENIED;
}

void* LoginConnection::on_session_channel() {
    if (!authenticated_ || channels_.size() >= kMaxChannels) return nullptr;
    auto ch = std::make_unique<Channel>();
    ch->owner = this;
    ch->channel = ssh_channel_new(session_);
    if (!ch->channel) return nullptr;
    ch->callbacks.userdata = ch.get();
    ch->callbacks.channel_pty_request_function = pty_callback;
    ch->callbacks.channel_pty_window_change_function = window_callback;
    ch->callbacks.channel_data_function = data_callback;
    ch->callbacks.channel_eof_function = eof_callback;
    ch->callbacks.channel_close_function = close_callback;
    ch->callbacks.channel_exec_request_function = [](ssh_session, ssh_channel, const char* command, void* data) {
        auto* c = static_cast<Channel*>(data);
        return c->owner->start(*c, command ? command : "") ? SSH_OK : SSH_ERROR;
    };
    ch->callbacks.channel_shell_request_function = [](ssh_session, ssh_channel, void* data) {
        auto* c = static_cast<Channel*>(data);
        return c->owner->start(*c, "") ? SSH_OK : SSH_ERROR;
    };
    ssh_callbacks_init(&ch->callbacks);
    ssh_set_channel_callbacks(ch->channel, &ch->callbacks);
    ssh_channel channel = ch->channel;
    channels_.push_back(std::move(ch));
    return channel;
}

bool LoginConnection::start(Channel& ch, const std::string& command) {
    if (ch.pid > 0 || ending_) return false;
    std::vector<std::string> argv;
    try {
        argv = login_command(*node_, command, ch.pty ? ch.term : "",
                             std::string(engine::kNodeStepPrefix) + "login-" + std::to_string(++steps_));
    } catch (const std::exception& e) {
        log::warning("node " + node_->node_id + ": a login's command cannot run: " + e.what());
        return false;
    }
    Started s = start_command(argv, ch.pty, ch.size);
    if (s.pid <= 0) {
        log::warning("node " + node_->node_id + ": a login's command did not start: " + std::strerror(errno));
        return false;
    }
    ch.pid = s.pid;
    ch.input = s.input;
    ch.output = s.output;
    ch.errors = s.errors;
    ch.pidfd = static_cast<int>(syscall(SYS_pidfd_open, s.pid, 0));
    ssh_event_add_fd(event_, ch.output, POLLIN, output_ready, &ch);
    if (ch.errors >= 0) ssh_event_add_fd(event_, ch.errors, POLLIN, output_ready, &ch);
    if (ch.pidfd >= 0) ssh_event_add_fd(event_, ch.pidfd, POLLIN, exited, &ch);
    return true;
}

int LoginConnection::on_message(ssh_message message) {
    if (ssh_message_type(message) != SSH_REQUEST_CHANNEL_OPEN || ssh_message_subtype(message) != SSH_CHANNEL_DIRECT_TCPIP) {
        return 1;  // libssh's default answer: refused
    }
    if (!authenticated_ || channels_.size() >= kMaxChannels) return 1;
    const char* host = ssh_message_channel_request_open_destination(message);
    const int port = ssh_message_channel_request_open_destination_port(message);
    const std::string target = std::string(host ? host : "") + ":" + std::to_string(port);
    std::optional<ForwardTarget> to = forward_target(host ? host : "", port);
    if (!to) {
        log::info("node " + node_->node_id + ": forwarding to " + target + " refused (loopback targets only)");
        return 1;
    }
    const int fd = connect_within(*to, kConnectTimeoutMs);
    if (fd < 0) {
        log::info("node " + node_->node_id + ": forwarding to " + target + ": " + std::strerror(errno));
        return 1;
    }
    auto ch = std::make_unique<Channel>();
    ch->owner = this;
    ch->forward = true;
    ch->socket = fd;
    ch->channel = ssh_message_channel_request_open_reply_accept(message);
    if (!ch->channel) {
        ::close(fd);
        return 0;  // answered already (the connection broke)
    }
    ch->callbacks.userdata = ch.get();
    ch->callbacks.channel_data_function = data_callback;
    ch->callbacks.channel_eof_function = eof_callback;
    ch->callbacks.channel_close_function = close_callback;
    ssh_callbacks_init(&ch->callbacks);
    ssh_set_channel_callbacks(ch->channel, &ch->callbacks);
    ssh_event_add_fd(event_, fd, POLLIN, output_ready, ch.get());
    channels_.push_back(std::move(ch));
    return 0;
}

void LoginConnection::serve() {
    ssh_server_callbacks_struct server{};
    server.userdata = this;
    int methods = 0;
    if (!admin_.password.empty()) {
        server.auth_password_function = password_callback;
        methods |= SSH_AUTH_METHOD_PASSWORD;
    }
    if (!admin_.public_key.empty()) {
        server.auth_pubkey_function = public_key_callback;
        methods |= SSH_AUTH_METHOD_PUBLICKEY;
    }
    server.channel_open_request_session_function = session_channel_callback;
    ssh_callbacks_init(&server);
    ssh_set_server_callbacks(session_, &server);
    ssh_set_message_callback(session_, message_callback, this);
    ssh_set_auth_methods(session_, methods ? methods : SSH_AUTH_METHOD_PUBLICKEY);
    const auto grace = std::chrono::steady_clock::now() + kLoginGrace;
    // The key exchange blocks in libssh: a client that says nothing is given up on after the grace
    // time (libssh waits for ever otherwise).
    long seconds = std::chrono::duration_cast<std::chrono::seconds>(kLoginGrace).count();
    ssh_options_set(session_, SSH_OPTIONS_TIMEOUT, &seconds);
    if (!ending_ && ssh_handle_key_exchange(session_) == SSH_OK) {
        event_ = ssh_event_new();
        if (event_ && ssh_event_add_session(event_, session_) == SSH_OK) {
            if (wake_[0] >= 0) {
                ssh_event_add_fd(event_, wake_[0], POLLIN, [](socket_t, int, void*) { return 0; }, nullptr);
            }
            while (!ending_) {
                if (ssh_event_dopoll(event_, 1000) == SSH_ERROR) break;
                if (!authenticated_ && (failures_ >= kMaxAuthTries || std::chrono::steady_clock::now() > grace)) break;
                tend();
                if (ssh_get_status(session_) & (SSH_CLOSED | SSH_CLOSED_ERROR)) break;
                if (!ssh_is_connected(session_)) break;
            }
        }
    }
    close_everything();
    finished_ = true;
}

void LoginConnection::hang_up(Channel& ch) {
    // As sshd when its client goes: the terminal (or stdin) closes, the command gets SIGHUP.
    if (ch.hung_up) return;
    ch.hung_up = true;
    if (ch.input >= 0 && ch.input != ch.output) ::close(ch.input);
    ch.input = -1;
    if (ch.pty && ch.output >= 0) {
        if (event_) ssh_event_remove_fd(event_, ch.output);
        ::close(ch.output);
        ch.output = -1;
    }
    if (ch.pid > 0) kill(-ch.pid, SIGHUP);
}

void LoginConnection::tend() {
    for (auto it = channels_.begin(); it != channels_.end();) {
        Channel& ch = **it;
        for (int fd : ch.done_streams) {
            if (fd == ch.output || fd == ch.errors || fd == ch.socket) ssh_event_remove_fd(event_, fd);
        }
        ch.done_streams.clear();
        if (!ch.forward && ch.pid > 0 && !ch.exit_seen && ch.pidfd < 0) {
            siginfo_t info{};
            if (waitid(P_PID, ch.pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == ch.pid) ch.exit_seen = true;
        }
        if (!ch.forward && ch.exit_seen && ch.pid > 0) {
            // The command ended: what it wrote last goes first (a bounded amount: a process it
            // left behind may hold the stream and write on), then its status, EOF and close.
            for (int fd : {ch.output, ch.errors}) {
                for (int rounds = 0; fd >= 0 && rounds < 4096 && pump(ch, fd); ++rounds) {
                }
            }
            int status = 0;
            while (waitpid(ch.pid, &status, 0) < 0 && errno == EINTR) {
            }
            ch.pid = -1;
            if (!ch.closed_by_client) {
                if (WIFSIGNALED(status)) {
                    const char* name = sigabbrev_np(WTERMSIG(status));
                    ssh_channel_request_send_exit_signal(ch.channel, name ? name : "KILL", 0, "", "");
                } else {
                    ssh_channel_request_send_exit_status(ch.channel, WIFEXITED(status) ? WEXITSTATUS(status) : 255);
                }
                ssh_channel_send_eof(ch.channel);
                ssh_channel_close(ch.channel);
            }
            ch.over = true;
        }
        if (!ch.forward && ch.closed_by_client) {
            if (ch.pid > 0) {
                hang_up(ch);  // and it is reaped when it has gone
            } else {
                ch.over = true;
            }
        }
        if (ch.forward && !ch.over && (ch.closed_by_client || ch.target_done)) {
            // The target closed: so does the channel (its client has had everything).
            if (!ch.closed_by_client) {
                ssh_channel_send_eof(ch.channel);
                ssh_channel_close(ch.channel);
            }
            ch.over = true;
        }
        if (ch.over) {
            if (ch.input == ch.output) ch.input = -1;  // a terminal's: closed once, as the output
            for (int* fd : {&ch.output, &ch.errors, &ch.pidfd, &ch.socket}) {
                if (*fd >= 0) {
                    ssh_event_remove_fd(event_, *fd);
                    ::close(*fd);
                }
                *fd = -1;
            }
            if (ch.input >= 0) ::close(ch.input);
            ch.input = -1;
            ssh_remove_channel_callbacks(ch.channel, &ch.callbacks);
            ssh_channel_free(ch.channel);
            it = channels_.erase(it);
        } else {
            ++it;
        }
    }
}

void LoginConnection::close_everything() {
    for (auto& owned : channels_) {
        Channel& ch = *owned;
        if (ch.pid > 0) {
            hang_up(ch);
            if (ch.output >= 0) {
                ::close(ch.output);
                ch.output = -1;
            }
            // Two seconds to go after the hang-up, as the node gateway gives its callers' commands.
            if (ch.pidfd >= 0) {
                pollfd p{ch.pidfd, POLLIN, 0};
                if (::poll(&p, 1, 2000) <= 0) kill(-ch.pid, SIGKILL);
            } else {
                kill(-ch.pid, SIGKILL);
            }
            while (waitpid(ch.pid, nullptr, 0) < 0 && errno == EINTR) {
            }
            ch.pid = -1;
        }
        for (int fd : {ch.output, ch.errors, ch.pidfd, ch.socket}) {
            if (fd >= 0) {
                if (event_) ssh_event_remove_fd(event_, fd);
                ::close(fd);
            }
        }
        if (ch.channel) ssh_remove_channel_callbacks(ch.channel, &ch.callbacks);
    }
    if (event_) {
        if (wake_[0] >= 0) ssh_event_remove_fd(event_, wake_[0]);
        ssh_event_remove_session(event_, session_);
        ssh_event_free(event_);
        event_ = nullptr;
    }
    channels_.clear();  // (their ssh_channels go with the session)
    std::lock_guard lock(socket_mutex_);  // (end() shuts this socket down, never another one of its number)
    ssh_disconnect(session_);
    ssh_free(session_);  // closes the socket
    session_ = nullptr;
    socket_ = -1;
}

}  // namespace bai::node_login
