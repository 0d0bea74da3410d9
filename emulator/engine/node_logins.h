// The ssh logins of the emulated nodes (emulator/node_login/): what the engine tells them of its
// nodes, and what it asks back for listRemoteLoginInformation. The engine runs without them (a
// scenario replay, a unit test): then nothing listens and the nodes show the service's ports.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "emulator/engine/node_hosts.h"

namespace bai::engine {

// A node as its ssh server needs it: where it is, what a login there runs in, and who may log in
// (the cluster's userAccountSettings; a password or a key left empty is not accepted).
struct LoginNode {
    std::string node_id;
    std::string address;  // the node's (127.0.1.N, or its Slurm host's)
    std::filesystem::path root;
    std::vector<std::string> gpus;  // UUIDs
    std::string user;
    std::string password;
    std::string public_key;  // one OpenSSH authorized_keys line: "ssh-rsa AAAA... comment"
    std::shared_ptr<NodeHosts> hosts;  // null: the node runs on this machine
};

class NodeLogins {
public:
    virtual ~NodeLogins() = default;
    // Every node that exists now, in a cluster not deleted. A node no longer listed is gone:
    // its logins end and connections to it are refused. Called on the engine's thread when the
    // list changes, before what other threads read of the nodes is published.
    virtual void set_nodes(std::vector<LoginNode> nodes) = 0;
    // Where a node's ssh server listens; nullopt when it has none.
    struct Endpoint {
        std::string address;
        int port = 0;
    };
    virtual std::optional<Endpoint> endpoint(const std::string& node_id) const = 0;
};

}  // namespace bai::engine
