#include "emulator/batch/node_image.h"

#include "emulator/engine/container_runtime.h"
#include "emulator/engine/sandbox.h"

namespace bai::batch {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// What --image may call the pool's image, most precise first.
std::vector<std::string> names_of(const json& reference) {
    std::vector<std::string> names;
    const std::string id = reference.value("virtualMachineImageId", "");
    if (!id.empty()) {
        names.push_back(id);
        names.push_back(id.substr(id.find_last_of('/') + 1));
        // .../images/NAME/versions/V: the image's name.
        if (size_t images = id.find("/images/"); images != std::string::npos) {
            const std::string rest = id.substr(images + 8);
            names.push_back(rest.substr(0, rest.find('/')));
        }
    }
    const std::string triple =
        reference.value("publisher", "") + ":" + reference.value("offer", "") + ":" + reference.value("sku", "");
    if (triple != "::") {
        if (reference.contains("version")) names.push_back(triple + ":" + reference.value("version", ""));
        names.push_back(triple);
    }
    return names;
}

}  // namespace

std::string NodeImage::view(const fs::path& node_root, const fs::path& path) const {
    if (!sandboxed()) return path.string();
    const fs::path relative = path.lexically_relative(node_root);
    if (relative.empty() || relative == ".") return kNodeRootView;
    return (fs::path(kNodeRootView) / relative).string();
}

std::optional<fs::path> NodeImage::host(const fs::path& node_root, const std::string& path) const {
    if (!sandboxed()) return fs::path(path);
    const fs::path relative = fs::path(path).lexically_normal().lexically_relative(kNodeRootView);
    if (relative.empty() || *relative.begin() == "..") return std::nullopt;
    return node_root / relative;
}

std::vector<std::string> NodeImage::wrap(const fs::path& node_root, const std::string& hostname,
                                         const std::vector<std::string>& devices, const fs::path& cwd,
                                         std::vector<std::string> argv) const {
    if (!sandboxed()) return argv;
    engine::SandboxSpec spec;
    spec.root = root;
    spec.binds.push_back({node_root, kNodeRootView});
    spec.hostname = hostname;
    spec.devices = devices;
    spec.cwd = view(node_root, cwd);
    return engine::sandbox_command(bwrap, spec, argv);
}

NodeImage image_of_pool(const json& pool, const std::map<std::string, fs::path>& images, const std::string& bwrap,
                        std::string& note) {
    const json reference = pool.value("virtualMachineConfiguration", json::object()).value("imageReference", json::object());
    const std::vector<std::string> names = names_of(reference);
    const std::string shown = names.empty() ? "(none)" : names.front();
    for (const std::string& name : names) {
        const fs::path* dir = engine::image_directory(images, name);
        if (!dir) continue;
        if (bwrap.empty()) {
            note = "the image " + shown + " has a root (" + dir->string() + ") but bubblewrap is not installed: tasks run on the host";
            return {};
        }
        note = "tasks run in a sandbox of the image " + shown + " (" + dir->string() + ")";
        return {*dir, bwrap};
    }
    note = "tasks run on the host (no --image for " + shown + ")";
    return {};
}

}  // namespace bai::batch
