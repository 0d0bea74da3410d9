#include "emulator/node_login/host_key.h"

#include <fcntl.h>
#include <libssh/libssh.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "common/crypto/random_id.h"

namespace bai::node_login {

namespace fs = std::filesystem;

namespace {

bool readable_key(const fs::path& file) {
    ssh_key key = nullptr;
    const bool ok = ssh_pki_import_privkey_file(file.c_str(), nullptr, nullptr, nullptr, &key) == SSH_OK && key;
    ssh_key_free(key);
    return ok;
}

}  // namespace

fs::path ensure_host_key(const fs::path& ssh_dir) {
    std::error_code ec;
    fs::create_directories(ssh_dir, ec);
    if (ec) throw std::runtime_error("cannot create " + ssh_dir.string() + ": " + ec.message());
    fs::permissions(ssh_dir, fs::perms::owner_all, ec);
    const fs::path file = ssh_dir / "host_ed25519_key";
    if (fs::exists(file, ec)) {
        if (!readable_key(file)) throw std::runtime_error("the ssh host key " + file.string() + " cannot be read");
        fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write, ec);
        return file;
    }
    ssh_key key = nullptr;
    if (ssh_pki_generate(SSH_KEYTYPE_ED25519, 0, &key) != SSH_OK || !key) throw std::runtime_error("cannot make an ssh host key");
    char* text = nullptr;
    const int exported = ssh_pki_export_privkey_base64(key, nullptr, nullptr, nullptr, &text);
    ssh_key_free(key);
    if (exported != SSH_OK || !text) throw std::runtime_error("cannot write an ssh host key");
    const std::string pem(text);
    ssh_string_free_char(text);
    // Written beside it at 0600 from the start, then renamed: never readable by others, never half there.
    const fs::path temporary = ssh_dir / (".host_key-" + crypto::random_hex(8));
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) throw std::runtime_error("cannot write " + temporary.string() + ": " + std::strerror(errno));
    const bool written = ::write(fd, pem.data(), pem.size()) == static_cast<ssize_t>(pem.size()) && ::fsync(fd) == 0;
    ::close(fd);
    if (!written) {
        fs::remove(temporary, ec);
        throw std::runtime_error("cannot write " + temporary.string());
    }
    fs::rename(temporary, file, ec);
    if (ec) throw std::runtime_error("cannot write " + file.string() + ": " + ec.message());
    return file;
}

std::string host_key_fingerprint(const fs::path& key_file) {
    ssh_key key = nullptr;
    if (ssh_pki_import_privkey_file(key_file.c_str(), nullptr, nullptr, nullptr, &key) != SSH_OK || !key) return "";
    ssh_key pub = nullptr;
    unsigned char* hash = nullptr;
    size_t length = 0;
    std::string out;
    if (ssh_pki_export_privkey_to_pubkey(key, &pub) == SSH_OK &&
        ssh_get_publickey_hash(pub, SSH_PUBLICKEY_HASH_SHA256, &hash, &length) == SSH_OK) {
        char* text = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, length);
        if (text) out = text;
        ssh_string_free_char(text);
        ssh_clean_pubkey_hash(&hash);
    }
    ssh_key_free(pub);
    ssh_key_free(key);
    return out;
}

}  // namespace bai::node_login
