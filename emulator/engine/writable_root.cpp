#include "emulator/engine/writable_root.h"

#include <sys/mount.h>

#include <cerrno>
#include <cstring>

#include "fuse_mounts/manager/mount_table.h"

namespace bai::engine {

namespace fs = std::filesystem;

std::unique_ptr<WritableRoot> WritableRoot::mount(const fs::path& lower, const fs::path& dir, std::string& why) {
    std::unique_ptr<WritableRoot> root(new WritableRoot(dir));
    std::error_code ec;
    remove_tree(dir, ec);
    ec.clear();
    for (const char* sub : {"upper", "work", "root"}) fs::create_directories(dir / sub, ec);
    if (ec) {
        why = "cannot create " + dir.string() + ": " + ec.message();
        return nullptr;
    }
    const std::string options = "lowerdir=" + lower.string() + ",upperdir=" + (dir / "upper").string() +
                                ",workdir=" + (dir / "work").string();
    if (::mount("overlay", root->merged_.c_str(), "overlay", 0, options.c_str()) != 0) {
        why = std::string("cannot mount an overlay (") + std::strerror(errno) + ")";
        fs::remove_all(dir, ec);
        return nullptr;
    }
    return root;
}

WritableRoot::~WritableRoot() {
    std::error_code ec;
    remove_tree(dir_, ec);
}

void remove_tree(const fs::path& path, std::error_code& ec) {
    // Nothing there, nothing mounted there (a new job's directory, mostly): the mount table, read
    // whole, is not.
    if (fs::symlink_status(path, ec).type() == fs::file_type::not_found) {
        ec.clear();
        return;
    }
    if (!mounts::release_mounts_under(path).empty()) {
        // Still mounted: walking into it could remove what is not ours.
        ec = std::make_error_code(std::errc::device_or_resource_busy);
        return;
    }
    fs::remove_all(path, ec);
}

}  // namespace bai::engine
