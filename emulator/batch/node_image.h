// Where a Batch node's processes (its start task, its tasks) run. On this machine by default;
// when the pool's image is given a local root with --image IMAGE=DIR (IMAGE: the pool's
// virtualMachineImageId, the image's name that ends it, or publisher:offer:sku[:version] of its
// imageReference), in a bubblewrap sandbox of that root, read-only, with the node's directory at
// /mnt/batch/tasks as the service lays out a Linux node (AZ_BATCH_NODE_ROOT_DIR), its own
// hostname and pid namespace.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace bai::batch {

// A Linux node's root directory, as the service mounts it.
inline constexpr const char* kNodeRootView = "/mnt/batch/tasks";

struct NodeImage {
    std::filesystem::path root;  // the image's root; empty: the host
    std::string bwrap;           // bubblewrap, when root is set

    bool sandboxed() const { return !root.empty(); }
    // A path under `node_root` as the node's processes see it.
    std::string view(const std::filesystem::path& node_root, const std::filesystem::path& host) const;
    // A path the node's processes name, on this machine (nullopt: outside the node's directory).
    std::optional<std::filesystem::path> host(const std::filesystem::path& node_root, const std::string& view) const;
    // The words that run `argv` on the node, in `cwd` (a host path under node_root), with only
    // `devices` (its GPUs' device nodes) in a sandbox's /dev.
    std::vector<std::string> wrap(const std::filesystem::path& node_root, const std::string& hostname,
                                  const std::vector<std::string>& devices, const std::filesystem::path& cwd,
                                  std::vector<std::string> argv) const;
};

// The pool's image: its local root when --image names it and bubblewrap is there (`bwrap` empty:
// not installed), else the host; `note` says which, for the log.
NodeImage image_of_pool(const nlohmann::json& pool, const std::map<std::string, std::filesystem::path>& images,
                        const std::string& bwrap, std::string& note);

}  // namespace bai::batch
