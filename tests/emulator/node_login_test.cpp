// The nodes' ssh servers' parts: who may log in, where a forward may go, the host key, the
// command a login runs, and a server's sockets following the nodes.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <libssh/libssh.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "emulator/node_login/host_key.h"
#include "emulator/node_login/login_command.h"
#include "emulator/node_login/login_rules.h"
#include "emulator/node_login/login_server.h"

namespace fs = std::filesystem;
using namespace bai::node_login;

namespace {

struct Key {
    ssh_key key = nullptr;
    explicit Key(ssh_keytypes_e type, int bits = 0) { ssh_pki_generate(type, bits, &key); }
    ~Key() { ssh_key_free(key); }
    std::string authorized_line(const std::string& comment = "someone@somewhere") const {
        char* b64 = nullptr;
        ssh_pki_export_pubkey_base64(key, &b64);
        std::string line = std::string(ssh_key_type_to_char(ssh_key_type(key))) + " " + b64 + " " + comment;
        ssh_string_free_char(b64);
        return line;
    }
};

fs::path temporary_dir(const std::string& name) {
    fs::path dir = fs::temp_directory_path() / ("bai-node-login-" + name + "-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

mode_t mode_of(const fs::path& path) {
    struct stat st{};
    ::stat(path.c_str(), &st);
    return st.st_mode & 0777;
}

// Runs argv; its stdout.
std::string run(const std::vector<std::string>& argv) {
    int out[2];
    if (pipe(out) != 0) return "";
    pid_t pid = fork();
    if (pid == 0) {
        dup2(out[1], 1);
        ::close(out[0]);
        std::vector<char*> args;
        for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        execv(args[0], args.data());
        _exit(127);
    }
    ::close(out[1]);
    std::string text;
    char buffer[4096];
    for (ssize_t n; (n = ::read(out[0], buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<size_t>(n));
    ::close(out[0]);
    waitpid(pid, nullptr, 0);
    return text;
}

// A TCP connection to address:port: its first line (the server's SSH banner), or "refused".
std::string first_line(const std::string& address, int port) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in in{};
    in.sin_family = AF_INET;
    in.sin_port = htons(static_cast<uint16_t>(port));
    inet_pton(AF_INET, address.c_str(), &in.sin_addr);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&in), sizeof in) != 0) {
        ::close(fd);
        return "refused";
    }
    timeval timeout{10, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    std::string line;
    char c;
    while (::read(fd, &c, 1) == 1 && c != '\n') line += c;
    ::close(fd);
    return line;
}

}  // namespace

TEST(LoginRules, PasswordOnlyForTheAdminUserAndItsPassword) {
    const AdminAccount admin{"azureuser", "Pass-word1", ""};
    EXPECT_TRUE(password_accepted(admin, "azureuser", "Pass-word1"));
    EXPECT_FALSE(password_accepted(admin, "azureuser", "Pass-word2"));
    EXPECT_FALSE(password_accepted(admin, "azureuser", "Pass-word1 "));
    EXPECT_FALSE(password_accepted(admin, "azureuser", ""));
    EXPECT_FALSE(password_accepted(admin, "root", "Pass-word1"));
    EXPECT_FALSE(password_accepted(admin, "AzureUser", "Pass-word1"));  // user names are exact, as sshd's
    // A cluster made with a key alone takes no password, not even an empty one.
    const AdminAccount keyed{"azureuser", "", "ssh-rsa AAAA"};
    EXPECT_FALSE(password_accepted(keyed, "azureuser", ""));
}

TEST(LoginRules, KeyOnlyTheAccountsOwn) {
    Key mine(SSH_KEYTYPE_ED25519), other(SSH_KEYTYPE_ED25519), rsa(SSH_KEYTYPE_RSA, 2048);
    const AdminAccount admin{"azureuser", "", mine.authorized_line()};
    EXPECT_TRUE(key_accepted(admin, "azureuser", mine.key));
    EXPECT_FALSE(key_accepted(admin, "azureuser", other.key));
    EXPECT_FALSE(key_accepted(admin, "someone", mine.key));
    EXPECT_FALSE(key_accepted(admin, "azureuser", nullptr));
    // Several lines (an authorized_keys file's worth), a line without a comment; an RSA key.
    const AdminAccount several{"u", "", "# a comment\n" + other.authorized_line() + "\n" + rsa.authorized_line("").substr(0) + "\n"};
    EXPECT_TRUE(key_accepted(several, "u", rsa.key));
    EXPECT_TRUE(key_accepted(several, "u", other.key));
    EXPECT_FALSE(key_accepted(several, "u", mine.key));
    // Garbage is no key.
    EXPECT_FALSE(key_accepted({"u", "", "ssh-rsa not-base64"}, "u", rsa.key));
    EXPECT_FALSE(key_accepted({"u", "", "nonsense"}, "u", rsa.key));
    EXPECT_FALSE(key_accepted({"u", "password", ""}, "u", rsa.key));
}

TEST(LoginRules, ForwardsGoToLoopbackOnly) {
    for (const char* host : {"localhost", "127.0.0.1", "127.0.1.5", "127.255.255.254"}) {
        auto target = forward_target(host, 6006);
        ASSERT_TRUE(target) << host;
        const auto* in = reinterpret_cast<const sockaddr_in*>(&target->address);
        EXPECT_EQ(in->sin_family, AF_INET);
        EXPECT_EQ(ntohs(in->sin_port), 6006);
        EXPECT_EQ(ntohl(in->sin_addr.s_addr) >> 24, 127u) << host;
    }
    auto six = forward_target("::1", 22);
    ASSERT_TRUE(six);
    EXPECT_EQ(six->address.ss_family, AF_INET6);
    for (const char* host : {"10.0.0.1", "0.0.0.0", "128.0.0.1", "8.8.8.8", "example.com", "localhost.example.com",
                             "127.0.0.1 ", "127.1", "", "::", "::ffff:10.0.0.1",
                             // loopback spelled otherwise: not resolved, refused as other names are
                             "2130706433", "0x7f000001", "0177.0.0.1", "::ffff:127.0.0.1", "[::1]", "127.0.0.1:22"}) {
        EXPECT_FALSE(forward_target(host, 6006)) << host;
    }
    EXPECT_FALSE(forward_target("127.0.0.1", 0));
    EXPECT_FALSE(forward_target("127.0.0.1", 65536));
    EXPECT_FALSE(forward_target("127.0.0.1", -1));
}

TEST(LoginRules, WhatAClientChoseIsLoggedOnOneLine) {
    EXPECT_EQ(logged("alice"), "\"alice\"");
    const std::string forged = logged("x\n2026-01-01 INFO node 1: root logged in\r");
    EXPECT_EQ(forged.find('\n'), std::string::npos) << forged;
    EXPECT_EQ(forged.find('\r'), std::string::npos) << forged;
    EXPECT_EQ(logged(std::string(1000, 'a')), "\"" + std::string(64, 'a') + "...\"");
    EXPECT_EQ(logged("\xff\xfe").find('\xff'), std::string::npos);  // not UTF-8: replaced, not thrown
}

TEST(HostKey, MadeOnceOwnerOnlyAndKept) {
    const fs::path dir = temporary_dir("key");
    const fs::path key = ensure_host_key(dir / "ssh");
    EXPECT_EQ(key, dir / "ssh" / "host_ed25519_key");
    EXPECT_EQ(mode_of(key), 0600u);
    EXPECT_EQ(mode_of(dir / "ssh"), 0700u);
    const std::string fingerprint = host_key_fingerprint(key);
    EXPECT_EQ(fingerprint.rfind("SHA256:", 0), 0u) << fingerprint;
    // The next start finds it (and tightens what someone loosened).
    fs::permissions(key, fs::perms::owner_read | fs::perms::owner_write | fs::perms::others_read);
    EXPECT_EQ(ensure_host_key(dir / "ssh"), key);
    EXPECT_EQ(host_key_fingerprint(key), fingerprint);
    EXPECT_EQ(mode_of(key), 0600u);
    // A file that is no key is not replaced behind the user's back.
    std::ofstream(key) << "not a key\n";
    EXPECT_THROW(ensure_host_key(dir / "ssh"), std::runtime_error);
    fs::remove_all(dir);
}

TEST(LoginCommand, RunsInTheNodesHomeWithItsVariables) {
    const fs::path root = temporary_dir("command") / "tvm-1_1";
    bai::engine::LoginNode node{"tvm-1_1", "127.0.1.9", root, {"GPU-a", "GPU-b"}, "u", "p", "", nullptr};
    std::vector<std::string> argv = login_command(node, "pwd; echo $HOME $AZ_BATCHAI_MOUNT_ROOT $CUDA_VISIBLE_DEVICES $TERM", "xterm", "s");
    ASSERT_EQ(argv.size(), 5u);
    EXPECT_EQ(argv[0], "/bin/sh");
    EXPECT_EQ(argv[4].substr(0, 3), "pwd");
    const std::string home = (root / "home").string();
    EXPECT_EQ(run(argv), home + "\n" + home + " " + (root / "mounts").string() + " GPU-a,GPU-b xterm\n");
    EXPECT_TRUE(fs::is_directory(root / "home"));
    // No terminal asked for: no TERM; no GPUs: none visible; the emulator's other variables stay out.
    node.gpus.clear();
    ::setenv("BAI_NODE_LOGIN_TEST_SECRET", "leaked", 1);
    EXPECT_EQ(run(login_command(node, "echo \"[$TERM] [$NVIDIA_VISIBLE_DEVICES] [$BAI_NODE_LOGIN_TEST_SECRET]\"", "", "s")),
              "[] [none] []\n");
    ::unsetenv("BAI_NODE_LOGIN_TEST_SECRET");
    // No command: a login shell.
    EXPECT_EQ(login_command(node, "", "", "s").back(), "exec /bin/bash -il");
    fs::remove_all(root.parent_path());
}

TEST(LoginServer, ASocketPerNodeWhileTheNodeExists) {
    const fs::path dir = temporary_dir("server");
    LoginServer server(ensure_host_key(dir / "ssh"));
    bai::engine::LoginNode a{"tvm-a", "127.0.1.201", dir / "a", {}, "u", "p", "", nullptr};
    bai::engine::LoginNode b{"tvm-b", "127.0.1.202", dir / "b", {}, "u", "p", "", nullptr};
    server.set_nodes({a, b});
    auto at_a = server.endpoint("tvm-a");
    auto at_b = server.endpoint("tvm-b");
    ASSERT_TRUE(at_a && at_b);
    EXPECT_EQ(at_a->address, "127.0.1.201");
    EXPECT_EQ(at_b->address, "127.0.1.202");
    EXPECT_GT(at_a->port, 0);
    EXPECT_FALSE(server.endpoint("tvm-c"));
    EXPECT_EQ(first_line(at_a->address, at_a->port).rfind("SSH-2.0-", 0), 0u);
    // The same list again changes nothing; a node left out is gone: refused from then on.
    server.set_nodes({a, b});
    EXPECT_EQ(server.endpoint("tvm-a")->port, at_a->port);
    server.set_nodes({b});
    EXPECT_FALSE(server.endpoint("tvm-a"));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    std::string answer;
    while ((answer = first_line(at_a->address, at_a->port)) != "refused" && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    EXPECT_EQ(answer, "refused");
    EXPECT_EQ(first_line(at_b->address, at_b->port).rfind("SSH-2.0-", 0), 0u);
    // A node whose address this machine lacks is reached on 127.0.0.1 (a Slurm host's node).
    bai::engine::LoginNode far{"tvm-far", "10.1.2.3", dir / "far", {}, "u", "p", "", nullptr};
    server.set_nodes({b, far});
    ASSERT_TRUE(server.endpoint("tvm-far"));
    EXPECT_EQ(server.endpoint("tvm-far")->address, "127.0.0.1");
    server.stop();
    EXPECT_FALSE(server.endpoint("tvm-b"));
    fs::remove_all(dir);
}
