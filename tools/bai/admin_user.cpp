#include "tools/bai/admin_user.h"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <pwd.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

#include "common/crypto/base64.h"
#include "tools/bai/cli_error.h"
#include "tools/bai/json_file.h"

namespace bai::cli {
namespace {

namespace fs = std::filesystem;

// A public key file's key, without its line end.
std::string read_key(const fs::path& path) {
    std::string s = read_text_file(path.string(), "--ssh-key");
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
    return s;
}

// SSH wire encoding: a uint32 length, then the bytes.
void put_string(std::string& out, const std::string& bytes) {
    uint32_t n = static_cast<uint32_t>(bytes.size());
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((n >> shift) & 0xff));
    out += bytes;
}

std::string mpint(const BIGNUM* value) {
    std::string bytes(static_cast<size_t>(BN_num_bytes(value)), '\0');
    BN_bn2bin(value, reinterpret_cast<unsigned char*>(bytes.data()));
    if (!bytes.empty() && (static_cast<unsigned char>(bytes[0]) & 0x80)) bytes.insert(bytes.begin(), '\0');
    return bytes;
}

void generate(const fs::path& private_path, const fs::path& public_path) {
    std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", size_t{2048}),
                                                           EVP_PKEY_free);
    if (!key) throw CliError("cannot generate an RSA key");
    BIGNUM* n = nullptr;
    BIGNUM* e = nullptr;
    if (!EVP_PKEY_get_bn_param(key.get(), OSSL_PKEY_PARAM_RSA_N, &n) ||
        !EVP_PKEY_get_bn_param(key.get(), OSSL_PKEY_PARAM_RSA_E, &e)) {
        BN_free(n);
        BN_free(e);
        throw CliError("cannot read the generated RSA key");
    }
    std::string blob;
    put_string(blob, "ssh-rsa");
    put_string(blob, mpint(e));
    put_string(blob, mpint(n));
    BN_free(n);
    BN_free(e);

    std::error_code ec;
    if (!fs::exists(private_path.parent_path(), ec)) {
        fs::create_directories(private_path.parent_path(), ec);
        chmod(private_path.parent_path().c_str(), 0700);
    }
    // Never over an existing key, and never readable by others, not even for a moment.
    int fd = open(private_path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0) throw CliError("cannot create " + private_path.string() + ": " + std::strerror(errno));
    FILE* out = fdopen(fd, "w");
    if (out == nullptr) {
        close(fd);
        throw CliError("cannot write " + private_path.string());
    }
    bool written = PEM_write_PrivateKey(out, key.get(), nullptr, nullptr, 0, nullptr, nullptr) == 1;
    std::fclose(out);
    if (!written) throw CliError("cannot write " + private_path.string());
    char host[256] = "localhost";
    gethostname(host, sizeof host - 1);
    const char* user = std::getenv("USER");
    std::ofstream pub(public_path, std::ios::trunc);
    pub << "ssh-rsa " << crypto::base64_encode(blob) << " " << (user ? user : "bai") << "@" << host << "\n";
    if (!pub) throw CliError("cannot write " + public_path.string());
}

std::string current_user() {
    if (const passwd* pw = getpwuid(geteuid()); pw != nullptr && pw->pw_name != nullptr) return pw->pw_name;
    return "batchai";
}

}  // namespace

void fill_admin_user(nlohmann::json& user, const AdminFlags& f) {
    if (!user.is_object()) user = nlohmann::json::object();
    if (!f.user.empty() || !user.contains("adminUserName")) user["adminUserName"] = f.user.empty() ? current_user() : f.user;
    if (!f.password.empty()) user["adminUserPassword"] = f.password;
    bool has_key = user.contains("adminUserSshPublicKey");
    bool has_password = user.contains("adminUserPassword");
    if (!f.ssh_key.empty() || f.generate_ssh_keys || (!has_key && !has_password)) {
        if (std::optional<std::string> key = admin_ssh_key(f.ssh_key, f.generate_ssh_keys)) {
            user["adminUserSshPublicKey"] = *key;
        } else if (!has_password) {
            throw CliError("Please provide a password (-p) or an ssh key (-k), or use --generate-ssh-keys", kExitUsage);
        }
    }
}

std::optional<std::string> admin_ssh_key(const std::string& flag_value, bool generate_missing) {
    if (!flag_value.empty()) {
        std::error_code ec;
        if (fs::is_regular_file(flag_value, ec)) return read_key(flag_value);
        if (flag_value.rfind("ssh-", 0) != 0) {
            throw CliError("--ssh-key: '" + flag_value + "' is neither a public key nor a file holding one", kExitUsage);
        }
        return flag_value;
    }
    const char* home = std::getenv("HOME");
    fs::path dir = fs::path(home != nullptr ? home : ".") / ".ssh";
    fs::path public_path = dir / "id_rsa.pub";
    std::error_code ec;
    if (!fs::exists(public_path, ec)) {
        if (!generate_missing) return std::nullopt;
        if (fs::exists(dir / "id_rsa", ec)) {
            throw CliError("SSH private key " + (dir / "id_rsa").string() +
                           " exists but its public key is missing: give the key with -k, or move id_rsa away");
        }
        generate(dir / "id_rsa", public_path);
        std::fprintf(stderr, "SSH key files '%s' and '%s' have been generated under ~/.ssh\n", "id_rsa", "id_rsa.pub");
    }
    return read_key(public_path);
}

}  // namespace bai::cli
