#include "emulator/engine/node_view.h"

namespace bai::engine {

namespace fs = std::filesystem;

namespace {

NodePaths paths_under(const std::string& mount_root, const std::string& jobs_root, const std::string& job_dir) {
    return {mount_root, job_dir + "/mounts", jobs_root, job_dir, job_dir + "/shared", job_dir + "/hostfile"};
}

}  // namespace

std::optional<fs::path> NodeView::to_host(const std::string& path) const {
    if (binds.empty()) return fs::path(path);
    fs::path normal = fs::path(path).lexically_normal();
    // The deepest bind that holds the path wins (binds lie in one another).
    for (auto it = binds.rbegin(); it != binds.rend(); ++it) {
        fs::path rel = normal.lexically_relative(it->view);
        if (rel.empty() || *rel.begin() == "..") continue;
        return rel == "." ? it->host : it->host / rel;
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
    view.binds.push_back({dirs.shared_dir, view.paths.shared_job_temp});
    for (const auto& [relative, host] : dirs.cluster_volumes) view.binds.push_back({host, view.paths.mount_root + "/" + relative});
    for (const auto& [relative, host] : dirs.job_volumes) view.binds.push_back({host, view.paths.job_mount_root + "/" + relative});
    order_binds(view.binds);
    return view;
}

}  // namespace bai::engine
