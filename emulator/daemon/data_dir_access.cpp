#include "emulator/daemon/data_dir_access.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace bai::daemon {
namespace fs = std::filesystem;
namespace {

std::string octal(mode_t mode) {
    char text[8];
    std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
    return text;
}

// Clears the group and other bits of `path` when it exists as the kind expected; symbolic
// links are left alone (lstat), so that a link planted in the directory cannot redirect a chmod.
void restrict_one(const fs::path& path, bool directory, mode_t wanted, std::vector<std::string>& changed) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) return;
    if (directory ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) return;
    mode_t now = st.st_mode & 07777;
    if ((now & 077) == 0) return;
    mode_t target = (now & ~static_cast<mode_t>(07777)) | wanted;
    if (::chmod(path.c_str(), target & 07777) != 0) {
        throw std::runtime_error("cannot restrict " + path.string() + ": " + std::strerror(errno));
    }
    changed.push_back(path.string() + " " + octal(now) + " -> " + octal(wanted));
}

}  // namespace

void create_private_dir(const fs::path& dir) {
    std::error_code ec;
    if (fs::exists(dir, ec)) return;
    fs::create_directories(dir.parent_path().empty() ? fs::path(".") : dir.parent_path(), ec);
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
        throw std::runtime_error("cannot create " + dir.string() + ": " + std::strerror(errno));
    }
}

std::vector<std::string> restrict_data_dir(const fs::path& dir) {
    std::vector<std::string> changed;
    restrict_one(dir, true, 0700, changed);
    for (const char* sub : {"storage", "tls", "nodes", "ssh"}) restrict_one(dir / sub, true, 0700, changed);
    for (const char* file : {"state.db", "state.db-wal", "state.db-shm", "state.db-journal", "emulator.lock",
                             "emulator.log", "tls/key.pem", "ssh/host_ed25519_key"}) {
        restrict_one(dir / file, false, 0600, changed);
    }
    return changed;
}

}  // namespace bai::daemon
