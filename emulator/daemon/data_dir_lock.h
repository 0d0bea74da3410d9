// DIR/emulator.lock: one emulator per data directory.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace bai::daemon {

class DataDirLock {
public:
    // Takes the lock or returns nullopt with `reason` saying who holds it.
    static std::optional<DataDirLock> acquire(const std::filesystem::path& dir, std::string& reason);
    DataDirLock(DataDirLock&& other) noexcept;
    DataDirLock& operator=(DataDirLock&&) = delete;
    DataDirLock(const DataDirLock&) = delete;
    ~DataDirLock();

private:
    explicit DataDirLock(int fd) : fd_(fd) {}
    int fd_;
};

}  // namespace bai::daemon
