// A job's stdout and stderr on a node's own disk (a stdOutErrPathPrefix of $AZ_BATCHAI_JOB_TEMP):
// no API reaches them, so the portal reads them where the engine says the job's last run wrote
// them, as long as that node is there. Every directory below the anchor (a directory the emulator
// made: the node's root) holds what the job put there, so nothing below it is followed through a
// symbolic link (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS), a path with a ".." part is refused,
// and only directories and regular files are shown or read.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace bai::portal {

// Where the logs are: the anchor, and the stdouterr directory's path under it.
struct NodeLogsPlace {
    std::filesystem::path anchor;
    std::string relative;
};

// The entries of `path` ("." or "sub/dir") of the stdouterr directory: [{name, directory, size}],
// names sorted; nullopt when it cannot be opened (the node left, a link is in the way, a ".." part).
std::optional<nlohmann::json> list_node_logs(const NodeLogsPlace& place, const std::string& path, size_t max_entries);

struct NodeLogRead {
    std::string bytes;
    std::uint64_t size = 0;
};
// Up to `max` bytes of the regular file `path` of the stdouterr directory from `from`; nullopt when
// it cannot be opened.
std::optional<NodeLogRead> read_node_log(const NodeLogsPlace& place, const std::string& path, std::uint64_t from,
                                         std::uint64_t max);

}  // namespace bai::portal
