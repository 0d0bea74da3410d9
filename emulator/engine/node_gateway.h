// The node gateway of a job run: password-less ssh between the job's nodes, as Batch AI set it up.
// The job's `ssh` (bai-node-ssh, emulator/engine/node_ssh_main.cpp) connects to an abstract Unix
// socket (the job's processes share the machine's network namespace, sandboxed or in docker
// with --network host), passes its stdin, stdout and stderr, and names a node and a command; the
// gateway runs the command through that node's script (which enters the node's sandbox or
// container) on those descriptors and answers its exit status.
//
// Only processes of this machine's user that know the run's token are served (SO_PEERCRED and a
// random token in the job's environment): another local user cannot run commands through it.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "emulator/engine/shell_words.h"

namespace bai::engine {

// The script through which the gateway (and the MPI agent) runs a command on a node: its argument
// in `cwd` with exactly `env`, through `wrapper` (the node's sandbox or container; nothing on the
// host) when there is one. An empty `cwd`: the wrapper enters the directory itself (srun --chdir
// into a node on a Slurm host).
std::string node_script(const std::string& id, const std::string& address, const std::filesystem::path& cwd,
                        const Environment& env, const std::vector<std::string>& wrapper);

class NodeGateway {
public:
    struct Node {
        std::string address;
        std::string id;                 // its hostname
        std::filesystem::path script;   // runs its argument on the node (node_script)
    };
    // The status a call gets for a host that is no node of the job (the client tries the real
    // ssh), and for a call refused (no token, a malformed request, the job ending).
    static constexpr int kNotANode = 1000;
    static constexpr int kRefused = 1001;

    // in_container: the service's containers ran their sshd on port 23 and kept no known hosts
    // (a warning on every call, recorded); on the host each node remembers the hosts it met and
    // knows itself.
    NodeGateway(std::vector<Node> nodes, bool in_container);
    ~NodeGateway();
    NodeGateway(const NodeGateway&) = delete;
    NodeGateway& operator=(const NodeGateway&) = delete;

    // "@bai-node-gateway-<random>" (BAI_NODE_GATEWAY) and the token (BAI_NODE_GATEWAY_TOKEN).
    const std::string& name() const { return name_; }
    const std::string& token() const { return token_; }

    // No new calls; the commands still running are killed; returns when every call has ended.
    void stop();

    // The warning OpenSSH prints for a host it adds to its known hosts.
    static std::string known_host_warning(const std::string& host, bool in_container);

private:
    void serve();
    void handle(int connection);
    int run(const Node& node, const std::string& command, const int fds[3], const std::string& warning, int connection);
    const Node* find(const std::string& host, const std::string& from) const;

    std::vector<Node> nodes_;
    bool in_container_;
    std::string name_;
    std::string token_;
    int listener_ = -1;
    int wake_[2] = {-1, -1};
    std::atomic<bool> stopping_{false};
    std::thread acceptor_;
    std::mutex mutex_;
    struct Call {
        std::thread thread;
        std::shared_ptr<std::atomic<bool>> done;
    };
    std::list<Call> calls_;
    std::set<int> connections_;                          // open, for stop() to shut down
    std::set<int> running_;                              // sessions (process groups) of the commands running
    std::map<std::string, std::set<std::string>> known_;  // node address -> hosts it knows
};

}  // namespace bai::engine
