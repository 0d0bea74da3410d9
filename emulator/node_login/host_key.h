// The nodes' ssh host key: one per data directory, made on first use (Ed25519, OpenSSH's format,
// readable by its owner only) and kept, so that a client that remembered it finds it again after
// a restart. All of an emulator's nodes show this one key.
#pragma once

#include <filesystem>
#include <string>

namespace bai::node_login {

// DIR/ssh/host_ed25519_key, made when absent (its directory 0700, the file 0600). Throws
// std::runtime_error saying why when it can be neither read nor made.
std::filesystem::path ensure_host_key(const std::filesystem::path& ssh_dir);

// "SHA256:..." of the key's public part, as OpenSSH prints it.
std::string host_key_fingerprint(const std::filesystem::path& key_file);

}  // namespace bai::node_login
