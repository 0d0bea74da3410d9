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

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <thread>
#include <set>
#include <vector>

#include "common/log/logger.h"
#include "emulator/engine/session_child.h"
#include "emulator/node_login/login_command.h"

namespace bai::node_login {

namespace {

constexpr int kMaxAuthTries = 6;                    // sshd's MaxAuthTries
constexpr auto kLoginGrace = std::chrono::seconds(30);  // to log in (sshd gives 120 s)
constexpr auto kHeldTurn = std::chrono::seconds(5);     // a turn of the connection's loop, logged when longer
// After each refused password, before the answer: guessing costs time (sshd waits too). Only this
// connection's thread waits.
constexpr auto kRefusalDelay = std::chrono::milliseconds(1000);
constexpr size_t kMaxChannels = 64;                 // open at once on one connection
constexpr size_t kChunk = 32768;
constexpr auto kHangUpGrace = std::chrono::seconds(2);  // for hung-up commands to go before SIGKILL

constexpr int kConnectTimeoutMs = 10000;     // a forward's target to accept (a full backlog drops SYNs)

void set_nonblocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

// A connected socket to the target (non-blocking: a target that stops reading must not stop the
// connection's other channels), or -1 with errno: the connection's other channels wait while it
// connects, so not for long.
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
    return fd;
}

// Writes what fits now into a non-blocking descriptor: the bytes written, or -1 when its reader has
// gone (nothing written).
ssize_t write_some(int fd, const char* data, size_t size, bool socket) {
    size_t done = 0;
    while (done < size) {
        ssize_t n = socket ? ::send(fd, data + done, size - done, MSG_NOSIGNAL | MSG_DONTWAIT) : ::write(fd, data + done, size - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
        if (n <= 0) return done > 0 ? static_cast<ssize_t>(done) : -1;
        done += static_cast<size_t>(n);
    }
    return static_cast<ssize_t>(done);
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
    // What goes to the command's stdin (or the target) waits while its reader is slow: in libssh's
    // channel buffer (so the client's window stops growing) and, taken from there, in `pending`;
    // the descriptor is watched for POLLOUT meanwhile. Nothing blocks the connection's thread.
    std::string pending;
    size_t pending_at = 0;       // (what of it was written)
    bool input_waiting = false;  // libssh holds bytes not taken yet
    bool input_gone = false;     // its reader has gone: what comes is dropped
    bool input_shut = false;     // the client's EOF was passed on
    std::set<int> ended;         // streams at their end (out of the poll)
    std::map<int, short> watched;  // each descriptor's events in the connection's poll

    int write_fd() const { return forward ? socket : input; }
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

enum class Pumped { moved, empty, ended, blocked };

// Moves what one of the command's streams (or the forward's target) has to the client, no more
// than the client's window takes (ssh_channel_write would wait for the rest, and give up after the
// session's timeout); at its end the stream is marked ended (out of the poll at the next tend()).
Pumped pump(Channel& ch, int fd) {
    const bool wanted = !ch.closed_by_client && !ch.over;  // else read and dropped: nobody wants it
    size_t room = kChunk;
    if (wanted) {
        room = std::min<size_t>(room, ssh_channel_window_size(ch.channel));
        if (room == 0) return Pumped::blocked;  // resumed by tend() when the window opens
    }
    char buffer[kChunk];
    ssize_t n = ch.forward ? ::recv(fd, buffer, room, MSG_DONTWAIT) : ::read(fd, buffer, room);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return Pumped::empty;
    if (n <= 0) {  // EOF, or EIO on a terminal whose processes have all gone
        if (ch.forward) ch.target_done = true;
        ch.ended.insert(fd);
        return Pumped::ended;
    }
    if (!wanted) return Pumped::moved;
    const int written = fd == ch.errors ? ssh_channel_write_stderr(ch.channel, buffer, static_cast<uint32_t>(n))
                                        : ssh_channel_write(ch.channel, buffer, static_cast<uint32_t>(n));
    if (written != n) {
        // Within the window this only fails when the connection has broken: the client is gone.
        log::warning("node login: output lost on a broken connection: " + std::string(ssh_get_error(ssh_channel_get_session(ch.channel))));
        ch.closed_by_client = true;
    }
    return Pumped::moved;
}

// Passes what waits for the command's stdin (or the target) on, as far as its reader takes it.
// What libssh holds is taken all at once: each read from its buffer reopens the client's window
// (ssh_channel_read grows it back whatever is buffered), so reading it in small pieces would let
// a slow reader's backlog grow without bound; this way at most one window waits in `pending` and
// at most one more in libssh's buffer.
// Not from inside the data callback (`from_libssh` false): the buffer it is handed is libssh's.
void drain_input(Channel& ch, bool from_libssh = true) {
    const int fd = ch.write_fd();
    for (int rounds = 0; rounds < 4 && fd >= 0 && !ch.input_gone; ++rounds) {
        if (ch.pending_at < ch.pending.size()) {
            const ssize_t n = write_some(fd, ch.pending.data() + ch.pending_at, ch.pending.size() - ch.pending_at, ch.forward);
            if (n < 0) {
                ch.input_gone = true;
                break;
            }
            ch.pending_at += static_cast<size_t>(n);
            if (ch.pending_at < ch.pending.size()) return;  // full again: POLLOUT says when it takes more
        }
        ch.pending.clear();
        ch.pending_at = 0;
        if (!ch.input_waiting || !from_libssh) return;
        ch.input_waiting = false;
        // (libssh's buffer is not empty, so this handles no packet: no callback runs inside it)
        const int held = ssh_channel_poll(ch.channel, 0);
        if (held <= 0) return;
        ch.pending.resize(static_cast<size_t>(held));
        const int n = ssh_channel_read_nonblocking(ch.channel, ch.pending.data(), static_cast<uint32_t>(held), 0);
        ch.pending.resize(n > 0 ? static_cast<size_t>(n) : 0);
    }
    if (ch.input_gone) {
        if (ch.forward) ch.target_done = true;
        ch.pending.clear();
        ch.pending_at = 0;
    }
}

int stream_ready(socket_t fd, int revents, void* data) {
    auto* ch = static_cast<Channel*>(data);
    if ((revents & (POLLOUT | POLLERR)) && fd == ch->write_fd()) drain_input(*ch);
    if ((revents & (POLLIN | POLLHUP | POLLERR)) && (fd == ch->output || fd == ch->errors || (ch->forward && fd == ch->socket))) {
        pump(*ch, fd);
    }
    return 0;
}

int exited(socket_t, int, void* data) {
    static_cast<Channel*>(data)->exit_seen = true;
    return 0;
}

// What the client sends: written as far as the reader takes it now; libssh keeps the rest (the
// count returned is what was taken) and stops growing the client's window while it waits.
int data_callback(ssh_session, ssh_channel, void* data, uint32_t size, int is_stderr, void* user) {
    auto* ch = static_cast<Channel*>(user);
    const int fd = ch->write_fd();
    // Nobody reads it (or the client's extended data, which sshd ignores too): dropped.
    if (fd < 0 || ch->input_gone || is_stderr) return static_cast<int>(size);
    if (!ch->pending.empty()) {  // (taken from libssh earlier: it goes first)
        drain_input(*ch, false);
        if (!ch->pending.empty() || ch->input_gone) {
            ch->input_waiting = !ch->input_gone;
            return ch->input_gone ? static_cast<int>(size) : 0;
        }
    }
    const ssize_t n = write_some(fd, static_cast<const char*>(data), size, ch->forward);
    if (n < 0) {
        ch->input_gone = true;
        if (ch->forward) ch->target_done = true;
        return static_cast<int>(size);
    }
    ch->input_waiting = static_cast<size_t>(n) < size;
    return static_cast<int>(n);
}

// (passed on by tend() once what came before it has been written)
void eof_callback(ssh_session, ssh_channel, void* user) { static_cast<Channel*>(user)->client_done = true; }

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
    const int slave_stdio[3] = {slave, slave, slave};
    const int pipe_stdio[3] = {in[0], out[1], err[1]};
    const pid_t pid = engine::spawn_in_own_session(args.data(), pty ? slave_stdio : pipe_stdio, pty);
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
    set_nonblocking(started.input);  // (with a terminal, the master: output too)
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
    log::info(std::string("node ") + node_->node_id + ": login refused for " + logged(user ? user : "") + " (password)");
    if (!ending_) std::this_thread::sleep_for(kRefusalDelay);
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
    log::info(std::string("node ") + node_->node_id + ": login refused for " + logged(user ? user : "") + " (key)");
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
    watch(ch);
    return true;
}

int LoginConnection::on_message(ssh_message message) {
    if (ssh_message_type(message) != SSH_REQUEST_CHANNEL_OPEN || ssh_message_subtype(message) != SSH_CHANNEL_DIRECT_TCPIP) {
        return 1;  // libssh's default answer: refused
    }
    if (!authenticated_ || channels_.size() >= kMaxChannels) return 1;
    const char* host = ssh_message_channel_request_open_destination(message);
    const int port = ssh_message_channel_request_open_destination_port(message);
    const std::string target = logged(host ? host : "") + " port " + std::to_string(port);
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
    watch(*ch);
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
    // (After it the option stays: nothing waits on it, as what goes to the client never exceeds its
    // window, so ssh_channel_write never waits for the window; 0 would mean libssh's 10 s, not none.)
    if (!ending_ && ssh_handle_key_exchange(session_) == SSH_OK) {
        event_ = ssh_event_new();
        if (event_ && ssh_event_add_session(event_, session_) == SSH_OK) {
            if (wake_[0] >= 0) {
                ssh_event_add_fd(event_, wake_[0], POLLIN, [](socket_t, int, void*) { return 0; }, nullptr);
            }
            while (!ending_) {
                const auto turn = std::chrono::steady_clock::now();
                if (ssh_event_dopoll(event_, 1000) == SSH_ERROR) break;
                if (!authenticated_ && (failures_ >= kMaxAuthTries || std::chrono::steady_clock::now() > grace)) break;
                tend();
                // A turn is at most the poll's second and what is ready: one far longer was spent
                // waiting inside libssh, and held every channel of the connection meanwhile.
                const auto held = std::chrono::steady_clock::now() - turn;
                if (held > kHeldTurn) {
                    log::warning("node " + node_->node_id + ": a login connection was held " +
                                 std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(held).count()) + " ms");
                }
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
    if (ch.input >= 0 && ch.input != ch.output) close_fd(ch, ch.input);
    ch.input = -1;
    ch.pending.clear();
    ch.pending_at = 0;
    ch.input_gone = true;
    if (ch.pty && ch.output >= 0) {
        close_fd(ch, ch.output);
        ch.output = -1;
    }
    if (ch.pid > 0) {
        kill(-ch.pid, SIGHUP);
        log::info("node " + node_->node_id + ": a login command's channel closed: hung up on its process group " + std::to_string(ch.pid));
    }
}

void LoginConnection::close_fd(Channel& ch, int fd) {
    auto it = ch.watched.find(fd);
    if (it != ch.watched.end()) {
        if (event_) ssh_event_remove_fd(event_, fd);
        ch.watched.erase(it);
    }
    ::close(fd);
}

void LoginConnection::watch(Channel& ch) {
    // Each stream is read while the client's window has room (else the command or the target
    // waits, as it would for a slow terminal), and written to while something waits for it.
    const bool room = ch.closed_by_client || ch.over || ssh_channel_window_size(ch.channel) > 0;
    std::map<int, short> wanted;
    for (int fd : {ch.output, ch.errors, ch.forward ? ch.socket : -1}) {
        if (fd >= 0 && !ch.ended.count(fd) && room) wanted[fd] |= POLLIN;
    }
    const int in = ch.write_fd();
    if (in >= 0 && !ch.input_gone && (ch.input_waiting || !ch.pending.empty())) wanted[in] |= POLLOUT;
    if (ch.pidfd >= 0 && !ch.exit_seen) wanted[ch.pidfd] = POLLIN;  // (readable for good once it has)
    for (auto it = ch.watched.begin(); it != ch.watched.end();) {
        auto w = wanted.find(it->first);
        if (w != wanted.end() && w->second == it->second) {
            wanted.erase(w);
            ++it;
            continue;
        }
        ssh_event_remove_fd(event_, it->first);
        it = ch.watched.erase(it);
    }
    for (auto [fd, events] : wanted) {
        if (ssh_event_add_fd(event_, fd, events, fd == ch.pidfd ? exited : stream_ready, &ch) == SSH_OK) ch.watched[fd] = events;
    }
}

void LoginConnection::tend() {
    for (auto it = channels_.begin(); it != channels_.end();) {
        Channel& ch = **it;
        // The client's EOF goes on once what it sent before has been written.
        if (ch.client_done && !ch.input_shut && (ch.input_gone || (ch.pending.empty() && !ch.input_waiting))) {
            ch.input_shut = true;
            if (ch.forward && ch.socket >= 0) {
                ::shutdown(ch.socket, SHUT_WR);
            } else if (!ch.pty && ch.input >= 0) {
                close_fd(ch, ch.input);  // the command reads EOF
                ch.input = -1;
            }
        }
        if (!ch.forward && ch.pid > 0 && !ch.exit_seen && ch.pidfd < 0) {
            siginfo_t info{};
            if (waitid(P_PID, ch.pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == ch.pid) ch.exit_seen = true;
        }
        bool drained = true;
        if (!ch.forward && ch.exit_seen && ch.pid > 0) {
            // The command ended: what it wrote last goes first, as the client's window lets it (a
            // bounded amount at a time: a process it left behind may hold the stream and write
            // on; what is not there now is not waited for), then its status, EOF and close.
            for (int fd : {ch.output, ch.errors}) {
                if (fd < 0 || ch.ended.count(fd)) continue;
                Pumped last = Pumped::moved;
                for (int rounds = 0; rounds < 4096 && (last = pump(ch, fd)) == Pumped::moved; ++rounds) {
                }
                if (last == Pumped::blocked) drained = false;
            }
        }
        if (!ch.forward && ch.exit_seen && ch.pid > 0 && drained) {
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
            for (int* fd : {&ch.output, &ch.errors, &ch.pidfd, &ch.socket, &ch.input}) {
                if (*fd >= 0) close_fd(ch, *fd);
                *fd = -1;
            }
            ssh_remove_channel_callbacks(ch.channel, &ch.callbacks);
            ssh_channel_free(ch.channel);
            it = channels_.erase(it);
        } else {
            watch(ch);
            ++it;
        }
    }
}

void LoginConnection::close_everything() {
    // Every command is hung up on at once, then given the same two seconds to go (as the node
    // gateway gives its callers' commands); what is left then is killed.
    for (auto& owned : channels_) {
        Channel& ch = *owned;
        if (ch.pid <= 0) continue;
        hang_up(ch);
        if (ch.output >= 0) {
            close_fd(ch, ch.output);
            ch.output = -1;
        }
    }
    const auto deadline = std::chrono::steady_clock::now() + kHangUpGrace;
    for (auto& owned : channels_) {
        Channel& ch = *owned;
        if (ch.pid <= 0) continue;
        bool gone = false;
        if (ch.pidfd >= 0) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
            pollfd p{ch.pidfd, POLLIN, 0};
            int n;
            while ((n = ::poll(&p, 1, static_cast<int>(std::max<long long>(0, left.count())))) < 0 && errno == EINTR) {
            }
            gone = n > 0;
        }
        if (!gone) kill(-ch.pid, SIGKILL);
        while (waitpid(ch.pid, nullptr, 0) < 0 && errno == EINTR) {
        }
        ch.pid = -1;
    }
    for (auto& owned : channels_) {
        Channel& ch = *owned;
        if (ch.input == ch.output) ch.input = -1;
        for (int fd : {ch.output, ch.errors, ch.pidfd, ch.socket, ch.input}) {
            if (fd >= 0) close_fd(ch, fd);
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
