#include "emulator/daemon/data_dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace bai::daemon {

std::optional<DataDirLock> DataDirLock::acquire(const std::filesystem::path& dir,
                                                std::string& reason) {
    std::filesystem::path path = dir / "emulator.lock";
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        reason = "cannot open " + path.string() + ": " + std::strerror(errno);
        return std::nullopt;
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        char pid[32] = {};
        ssize_t n = ::pread(fd, pid, sizeof pid - 1, 0);
        std::string holder = n > 0 ? std::string(pid, static_cast<size_t>(n)) : "unknown";
        while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
        reason = dir.string() + " is in use by another batchai-emulator (pid " + holder + ")";
        ::close(fd);
        return std::nullopt;
    }
    std::string pid = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) < 0) {
        reason = "cannot write " + path.string() + ": " + std::strerror(errno);
        ::close(fd);
        return std::nullopt;
    }
    return DataDirLock(fd);
}

DataDirLock::DataDirLock(DataDirLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }

DataDirLock::~DataDirLock() {
    if (fd_ >= 0) ::close(fd_);
}

}  // namespace bai::daemon
