// The admin user of cluster and file-server create, as the az CLI chose it: -u (default: the
// current user), -p, and the SSH public key from -k/--ssh-key (the key itself or a file holding
// it), else ~/.ssh/id_rsa.pub, which --generate-ssh-keys creates (RSA 2048, private key beside
// it) when it is missing. A password or a key is required.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace bai::cli {

struct AdminFlags {
    std::string user, password, ssh_key;
    bool generate_ssh_keys = false;
};

// Completes `settings` (a UserAccountSettings, maybe from a config file) from the flags.
void fill_admin_user(nlohmann::json& settings, const AdminFlags& flags);

// nullopt when no key was given, none is in ~/.ssh and none was to be generated.
std::optional<std::string> admin_ssh_key(const std::string& flag_value, bool generate);

}  // namespace bai::cli
