// Small file helpers for the tests that go through a mount.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <unistd.h>

namespace bai::mounts::testing {

inline std::string read_all(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

inline void write_all(const std::filesystem::path& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
}

// prefix + i + suffix (appends: GCC 12 warns falsely on "literal" + std::string).
inline std::string named(const char* prefix, int i, const char* suffix = "") {
    return std::string(prefix).append(std::to_string(i)).append(suffix);
}

// Mounting needs /dev/fuse and root.
inline bool can_mount_fuse() { return ::access("/dev/fuse", R_OK | W_OK) == 0 && ::geteuid() == 0; }

}  // namespace bai::mounts::testing
