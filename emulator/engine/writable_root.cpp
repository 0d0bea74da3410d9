#include "emulator/engine/writable_root.h"

#include <sys/mount.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

namespace bai::engine {

namespace fs = std::filesystem;

namespace {

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescape_mount_path(const std::string& text) {
    std::string out;
    for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '\\' && i + 3 < text.size()) {
            const std::string digits = text.substr(i + 1, 3);
            if (std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '7'; })) {
                out.push_back(static_cast<char>(std::stoi(digits, nullptr, 8)));
                i += 3;
                continue;
            }
        }
        out.push_back(text[i]);
    }
    return out;
}

bool lies_in(const std::string& path, const std::string& dir) {
    return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/');
}

// The mount points at or below `under`, deepest first.
std::vector<std::string> mount_points_below(const fs::path& under) {
    std::error_code ec;
    fs::path base = fs::weakly_canonical(under, ec);
    if (ec) return {};
    std::ifstream in("/proc/self/mountinfo");
    std::vector<std::string> points;
    for (std::string line; std::getline(in, line);) {
        std::istringstream fields(line);
        std::string id, parent, device, root, point;
        if (!(fields >> id >> parent >> device >> root >> point)) continue;
        point = unescape_mount_path(point);
        if (lies_in(point, base.string())) points.push_back(point);
    }
    std::sort(points.begin(), points.end(), [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
    return points;
}

}  // namespace

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
    unmount_below(path);
    // Still a mount point (not ours to unmount): its contents are not removed.
    if (!mount_points_below(path).empty()) {
        ec = std::make_error_code(std::errc::device_or_resource_busy);
        return;
    }
    fs::remove_all(path, ec);
}

int unmount_below(const fs::path& under) {
    std::vector<std::string> points = mount_points_below(under);
    int count = 0;
    for (const std::string& point : points) {
        if (::umount2(point.c_str(), MNT_DETACH) == 0) ++count;
    }
    return count;
}

}  // namespace bai::engine
