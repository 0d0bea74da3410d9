// bai-node-ssh: the `ssh` of a job's processes. Batch AI set up password-less ssh between the
// nodes of a job (`ssh 10.0.0.5 hostname` from the master ran on the other node); the emulated
// nodes share one machine, so this client hands the command, with its own stdin, stdout and
// stderr, to the job's node gateway (a Unix socket of the emulator, named in BAI_NODE_GATEWAY),
// which runs it on the node named and answers its exit status. A host that is no node of the
// job goes to the real ssh further along PATH.
//
// Linked statically: it is bound into containers whose images have no C++ runtime.
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr int kNotANode = 1000;  // the gateway's answer for a host that is no node of the job
constexpr int kRefused = 1001;   // ... for a call it refused (the job ended, a bad request)
constexpr size_t kMaxMessage = 1 << 20;

// OpenSSH's options that take an argument ("-p 23", "-o Opt=v"), and those that do not.
bool takes_argument(char option) { return std::strchr("BbcDEeFIiJLlmOoPpQRSWw", option) != nullptr; }

struct Invocation {
    std::string host;
    std::string command;    // the remaining words joined by spaces, as ssh sends them
    bool null_stdin = false;  // -n, -f: stdin from /dev/null
    bool quiet = false;       // -q, -o LogLevel=QUIET|FATAL|ERROR: no warnings
};

// Options before the destination and, as OpenSSH parses them again, right after it ("ssh host
// -p 23 cmd", as Horovod runs it); "--" or the first other word starts the command.
bool parse(int argc, char** argv, Invocation& out) {
    int i = 1;
    auto options = [&]() {
        for (; i < argc; ++i) {
            const char* a = argv[i];
            if (std::strcmp(a, "--") == 0) {
                ++i;
                return;
            }
            if (a[0] != '-' || a[1] == '\0') return;
            for (const char* c = a + 1; *c; ++c) {
                if (*c == 'n' || *c == 'f') out.null_stdin = true;
                if (*c == 'q') out.quiet = true;
                if (takes_argument(*c)) {
                    const char* value = c[1] ? c + 1 : (i + 1 < argc ? argv[++i] : "");
                    if (*c == 'o' && (std::strstr(value, "LogLevel=QUIET") || std::strstr(value, "LogLevel=ERROR") ||
                                      std::strstr(value, "LogLevel=FATAL") || std::strstr(value, "LogLevel QUIET"))) {
                        out.quiet = true;
                    }
                    break;
                }
            }
        }
    };
    options();
    if (i >= argc) return false;
    out.host = argv[i++];
    if (size_t at = out.host.rfind('@'); at != std::string::npos) out.host = out.host.substr(at + 1);
    options();
    for (; i < argc; ++i) {
        if (!out.command.empty()) out.command += ' ';
        out.command += argv[i];
    }
    return true;
}

// The first `ssh` on PATH that is not this program.
void exec_real_ssh(char** argv) {
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = '\0';
    const char* path = std::getenv("PATH");
    std::string dirs = path ? path : "/usr/bin:/bin";
    size_t start = 0;
    while (start <= dirs.size()) {
        size_t end = dirs.find(':', start);
        if (end == std::string::npos) end = dirs.size();
        std::string candidate = dirs.substr(start, end - start) + "/ssh";
        char resolved[4096];
        if (access(candidate.c_str(), X_OK) == 0 && realpath(candidate.c_str(), resolved) &&
            std::strcmp(resolved, self) != 0) {
            execv(candidate.c_str(), argv);
        }
        start = end + 1;
    }
}

int talk_to_gateway(const char* gateway, const Invocation& call) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    // "@name": an abstract socket (the job's processes share the machine's network namespace).
    const size_t length = std::strlen(gateway);
    if (length < 2 || length >= sizeof address.sun_path || gateway[0] != '@') return -1;
    std::memcpy(address.sun_path + 1, gateway + 1, length - 1);
    const socklen_t size = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + length);
    if (connect(fd, reinterpret_cast<sockaddr*>(&address), size) != 0) return -1;

    const char* token = std::getenv("BAI_NODE_GATEWAY_TOKEN");
    const char* from = std::getenv("BAI_NODE_ADDRESS");
    std::string message = std::string("bai-ssh-2") + '\0' + (token ? token : "") + '\0' + (from ? from : "") + '\0' +
                          call.host + '\0' + (call.quiet ? "q" : "") + '\0' + call.command;
    if (message.size() > kMaxMessage) {
        std::fputs("ssh: the command is longer than 1 MiB\n", stderr);
        return kRefused;
    }
    const std::uint32_t size_prefix = static_cast<std::uint32_t>(message.size());
    std::string framed(reinterpret_cast<const char*>(&size_prefix), sizeof size_prefix);
    framed += message;

    // The message and, with its first byte, this process's stdin, stdout and stderr.
    int fds[3] = {0, 1, 2};
    if (call.null_stdin) {
        fds[0] = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (fds[0] < 0) return -1;
    }
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof fds)] = {};
    iovec io{framed.data(), framed.size()};
    msghdr header{};
    header.msg_iov = &io;
    header.msg_iovlen = 1;
    header.msg_control = control;
    header.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&header);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof fds);
    std::memcpy(CMSG_DATA(c), fds, sizeof fds);
    if (sendmsg(fd, &header, MSG_NOSIGNAL) != static_cast<ssize_t>(framed.size())) return -1;

    std::int32_t status = 0;
    size_t got = 0;
    while (got < sizeof status) {
        ssize_t n = read(fd, reinterpret_cast<char*>(&status) + got, sizeof status - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return 255;  // the gateway went away: the job ended
        got += static_cast<size_t>(n);
    }
    close(fd);
    return status;
}

}  // namespace

int main(int argc, char** argv) {
    Invocation call;
    if (!parse(argc, argv, call)) {
        std::fputs("usage: ssh [options] destination [command]\n", stderr);
        return 255;
    }
    const char* gateway = std::getenv("BAI_NODE_GATEWAY");
    int status = gateway ? talk_to_gateway(gateway, call) : kNotANode;
    if (status == kNotANode) {
        exec_real_ssh(argv);
        std::fprintf(stderr, "ssh: Could not resolve hostname %s: Name or service not known\n", call.host.c_str());
        return 255;
    }
    if (status < 0) {
        // Never the real ssh to a node's address: the job's gateway is gone (the job ended).
        std::fprintf(stderr, "ssh: connect to host %s port 22: Connection refused\n", call.host.c_str());
        return 255;
    }
    if (status == kRefused) {
        std::fprintf(stderr, "ssh: %s: the job's node gateway refused the call\n", call.host.c_str());
        return 255;
    }
    return status;
}
