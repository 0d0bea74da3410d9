// The data directory is its owner's alone: it holds the storage account keys, the admin
// passwords and secrets of jobs (state.db), the TLS private key and every blob and file.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace bai::daemon {

// Creates `dir` when missing, as 0700.
void create_private_dir(const std::filesystem::path& dir);

// Takes group and other permissions away from `dir` (0700), its storage/ and tls/ directories
// (0700) and the files that hold secrets (state.db and its WAL and shared-memory files, the
// TLS key, the lock, the logs: 0600). Directories of older versions were 0755 and their files
// 0644. Returns one line per path whose mode it changed ("PATH 0755 -> 0700"), for the log.
// What lies deeper (share files, blob content) is reachable only through these directories.
std::vector<std::string> restrict_data_dir(const std::filesystem::path& dir);

}  // namespace bai::daemon
