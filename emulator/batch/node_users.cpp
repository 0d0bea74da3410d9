// The user accounts of a compute node (add, update, delete), kept with the node (a new or
// reimaged node has none) and written where the node's processes see them, as a Linux node's
// accounts: DIR/users/passwd (NAME:x:UID:GID:...:HOME:/bin/bash), group (admins in sudo),
// shadow (owner-only: the password's SHA-512 crypt, `!` without one) and the home directories
// with .ssh/authorized_keys holding the account's SSH public key. DIR is the node's directory
// ($AZ_BATCH_NODE_ROOT_DIR).
#include <crypt.h>

#include <fstream>

#include "common/crypto/random_id.h"
#include "common/text/ascii.h"
#include "common/time/timestamps.h"
#include "emulator/batch/pool_nodes.h"
#include "emulator/engine/writable_root.h"

namespace bai::batch {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr int kFirstUid = 1001;

BatchError user_not_found() { return BatchError(404, "NodeUserNotFound", "The node user account does not exist."); }

// SHA-512 crypt ("$6$SALT$HASH"), as /etc/shadow keeps a password.
std::string shadow_hash(const std::string& password) {
    static const char kSaltChars[] = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    const std::string random = crypto::random_hex(16);
    std::string salt = "$6$";
    for (char c : random) salt += kSaltChars[static_cast<unsigned char>(c) % 64];
    crypt_data data{};
    const char* hashed = crypt_r(password.c_str(), salt.c_str(), &data);
    return hashed && hashed[0] == '$' ? std::string(hashed) : "!";
}

void write_file(const fs::path& file, const std::string& text, fs::perms perms) {
    std::ofstream(file, std::ios::trunc) << text;
    std::error_code ec;
    fs::permissions(file, perms, ec);
}

}  // namespace

void PoolNodes::write_users(const Node& node) {
    const fs::path dir = node.root / "users";
    std::error_code ec;
    fs::create_directories(dir, ec);
    std::string passwd, shadow, admins;
    int uid = kFirstUid;
    for (const auto& [key, user] : node.users) {
        const std::string name = user.value("name", "");
        const fs::path home = dir / name;
        passwd += name + ":x:" + std::to_string(uid) + ":" + std::to_string(uid) + ":" +
                  (user.value("isAdmin", false) ? "admin" : "user") + ":" + node.image.view(node.root, home) + ":/bin/bash\n";
        shadow += name + ":" + user.value("_hash", "!") + ":::::::\n";
        if (user.value("isAdmin", false)) admins += (admins.empty() ? "" : ",") + name;
        fs::create_directories(home / ".ssh", ec);
        const std::string key_text = user.value("sshPublicKey", "");
        if (key_text.empty()) {
            fs::remove(home / ".ssh" / "authorized_keys", ec);
        } else {
            write_file(home / ".ssh" / "authorized_keys", key_text + "\n", fs::perms::owner_read | fs::perms::owner_write);
        }
        ++uid;
    }
    write_file(dir / "passwd", passwd, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
    write_file(dir / "group", "sudo:x:27:" + admins + "\n",
               fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
    write_file(dir / "shadow", shadow, fs::perms::owner_read | fs::perms::owner_write);
}

PoolNodes::Node& PoolNodes::need_ready_node(const Key& key, const std::string& node_id) {
    Node* node = find_node(key, node_id);
    if (!node) throw BatchError(404, "NodeNotFound", "The specified node does not exist.");
    if (node->state != "idle" && node->state != "running") {
        throw BatchError(409, "NodeNotReady", "A user account can be added to, changed on or removed from a node only while it is idle or running.",
                         {{"NodeState", node->state}});
    }
    return *node;
}

void PoolNodes::add_user(const std::string& account, const std::string& pool_id, const std::string& node_id, const json& user) {
    const Key key{account, text::lower(pool_id)};
    ask<bool>([this, key, node_id, user] {
        Node& node = need_ready_node(key, node_id);
        const std::string name = user.value("name", "");
        if (node.users.count(text::lower(name))) throw BatchError(409, "NodeUserExists", "The node user account already exists.");
        json kept = user;
        kept["_hash"] = user.contains("password") ? shadow_hash(user.value("password", "")) : "!";
        kept.erase("password");
        node.users[text::lower(name)] = kept;
        write_users(node);
        trace("batch pool " + state_[key].id, "node " + node_id + " has user " + name);
        return true;
    });
}

// Replaces what can change (password, expiryTime, sshPublicKey): what the body leaves out goes
// back to its default (no password, a day from now, no key).
void PoolNodes::update_user(const std::string& account, const std::string& pool_id, const std::string& node_id,
                            const std::string& name, const json& change) {
    const Key key{account, text::lower(pool_id)};
    ask<bool>([this, key, node_id, name, change] {
        Node& node = need_ready_node(key, node_id);
        auto it = node.users.find(text::lower(name));
        if (it == node.users.end()) throw user_not_found();
        json& user = it->second;
        user["_hash"] = change.contains("password") ? shadow_hash(change.value("password", "")) : "!";
        user["expiryTime"] = change.value("expiryTime", time::format_iso8601(time::now() + std::chrono::hours(24)));
        if (change.contains("sshPublicKey")) {
            user["sshPublicKey"] = change["sshPublicKey"];
        } else {
            user.erase("sshPublicKey");
        }
        write_users(node);
        return true;
    });
}

void PoolNodes::delete_user(const std::string& account, const std::string& pool_id, const std::string& node_id, const std::string& name) {
    const Key key{account, text::lower(pool_id)};
    ask<bool>([this, key, node_id, name] {
        Node& node = need_ready_node(key, node_id);
        auto it = node.users.find(text::lower(name));
        if (it == node.users.end()) throw user_not_found();
        std::error_code ec;
        engine::remove_tree(node.root / "users" / it->second.value("name", ""), ec);
        node.users.erase(it);
        write_users(node);
        return true;
    });
}

std::optional<int> PoolNodes::node_number(const std::string& account, const std::string& pool_id, const std::string& node_id) {
    const Key key{account, text::lower(pool_id)};
    return ask<std::optional<int>>([this, key, node_id]() -> std::optional<int> {
        Node* node = find_node(key, node_id);
        return node ? std::optional<int>(node->number) : std::nullopt;
    });
}

}  // namespace bai::batch
