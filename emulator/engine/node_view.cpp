#include "emulator/engine/node_view.h"

namespace bai::engine {

namespace fs = std::filesystem;

namespace {

NodePaths paths_under(const std::string& mount_root, const std::string& jobs_root, const std::string& job_dir) {
    return {mount_root, job_dir + "/mounts", jobs_root, job_dir, job_dir + "/shared", job_dir + "/hostfile"};
}

}  // namespace

std::optional<fs::path> rebase(const fs::path& path, const fs::path& from, const fs::path& to) {
    fs::path rel = path.lexically_normal().lexically_relative(from);
    if (rel.empty() || *rel.begin() == "..") return std::nullopt;
    return rel == "." ? to : to / rel;
}

std::optional<fs::path> NodeView::to_host(const std::string& path) const {
    if (binds.empty()) return fs::path(path);
    // The deepest bind that holds the path wins (binds lie in one another).
    for (auto it = binds.rbegin(); it != binds.rend(); ++it) {
        if (std::optional<fs::path> host = rebase(path, it->view, it->host)) return host;
    }
    return std::nullopt;
}

NodeView host_view(const NodeDirectories& dirs) {
    NodeView view;
    view.job_dir = (dirs.node_root / "jobs" / dirs.job_name).string();
    view.paths = paths_under((dirs.node_root / "mounts").string(), (dirs.node_root / "jobs").string(), view.job_dir);
    return view;
}

NodeView container_view(const NodeDirectories& dirs) {
    const std::string root = kServiceRoot;
    NodeView view;
    view.job_dir = root + "/jobs/" + dirs.job_name;
    view.paths = paths_under(root + "/mounts", root + "/jobs", view.job_dir);
    view.binds.push_back({dirs.node_root / "jobs", root + "/jobs"});
    // The node's mount root as a whole, as on the service's nodes: a directory made there
    // without a volume behind it (an output or log path under $AZ_BATCHAI_MOUNT_ROOT that names
    // no share) is the node's local disk, not a failure.
    view.binds.push_back({dirs.node_root / "mounts", view.paths.mount_root});
    view.binds.push_back({dirs.shared_dir, view.paths.shared_job_temp});
    for (const auto& [relative, host] : dirs.cluster_volumes) view.binds.push_back({host, view.paths.mount_root + "/" + relative});
    for (const auto& [relative, host] : dirs.job_volumes) view.binds.push_back({host, view.paths.job_mount_root + "/" + relative});
    order_binds(view.binds);
    return view;
}

}  // namespace bai::engine
