// A job's stdout and stderr on a node's own disk (a stdOutErrPathPrefix of $AZ_BATCHAI_JOB_TEMP):
// no API reaches them, so the portal reads them where the engine says the job's last run wrote
// them, as long as that node is there. The directory holds what the job put there: nothing in it
// is followed through a symbolic link (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS), and only
// directories and regular files are shown or read.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace bai::portal {

// The entries of `path` ("." or "sub/dir") under `root`: [{name, directory, size}], names sorted;
// nullopt when it cannot be opened (the node left, or a link is in the way).
std::optional<nlohmann::json> list_node_logs(const std::filesystem::path& root, const std::string& path,
                                             size_t max_entries);

struct NodeLogRead {
    std::string bytes;
    std::uint64_t size = 0;
};
// Up to `max` bytes of the regular file `path` under `root` from `from`; nullopt when it cannot
// be opened.
std::optional<NodeLogRead> read_node_log(const std::filesystem::path& root, const std::string& path, std::uint64_t from,
                                         std::uint64_t max);

}  // namespace bai::portal
