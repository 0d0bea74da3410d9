#include "fuse_mounts/manager/mount_table.h"

#include <sys/mount.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace bai::mounts {
namespace {

std::string decode_octal_escapes(std::string_view field) {
    std::string out;
    for (size_t i = 0; i < field.size(); ++i) {
        if (field[i] == '\\' && i + 3 < field.size()) {
            std::string_view digits = field.substr(i + 1, 3);
            bool octal = std::all_of(digits.begin(), digits.end(), [](char c) {
                             return c >= '0' && c <= '7';
                         });
            if (octal) {
                out += static_cast<char>((digits[0] - '0') * 64 + (digits[1] - '0') * 8 +
                                         (digits[2] - '0'));
                i += 3;
                continue;
            }
        }
        out += field[i];
    }
    return out;
}

bool is_at_or_below(const std::string& path, const std::string& root) {
    if (path == root) return true;
    std::string prefix = root.ends_with('/') ? root : root + "/";
    return path.rfind(prefix, 0) == 0;
}

}  // namespace

std::vector<std::string> parse_mount_points(std::string_view mountinfo) {
    std::vector<std::string> points;
    std::istringstream lines{std::string(mountinfo)};
    std::string line;
    while (std::getline(lines, line)) {
        // mount-id parent-id major:minor root mount-point options ...
        std::istringstream fields(line);
        std::string id, parent, device, root, point;
        if (fields >> id >> parent >> device >> root >> point) {
            points.push_back(decode_octal_escapes(point));
        }
    }
    return points;
}

std::vector<std::string> mounts_under(const std::filesystem::path& root,
                                      std::string_view mountinfo) {
    std::string base = root.lexically_normal().string();
    if (base.size() > 1 && base.ends_with('/')) base.pop_back();
    std::vector<std::string> found;
    for (const std::string& point : parse_mount_points(mountinfo)) {
        if (is_at_or_below(point, base)) found.push_back(point);
    }
    auto depth = [](const std::string& p) { return std::count(p.begin(), p.end(), '/'); };
    std::sort(found.begin(), found.end(), [&](const std::string& a, const std::string& b) {
        return depth(a) != depth(b) ? depth(a) > depth(b) : a < b;
    });
    found.erase(std::unique(found.begin(), found.end()), found.end());
    return found;
}

std::vector<unsigned> fuse_connections_under(const std::filesystem::path& root, std::string_view mountinfo) {
    std::string base = root.lexically_normal().string();
    if (base.size() > 1 && base.ends_with('/')) base.pop_back();
    std::vector<unsigned> found;
    std::istringstream lines{std::string(mountinfo)};
    std::string line;
    while (std::getline(lines, line)) {
        // mount-id parent-id major:minor root mount-point options [optional fields] - fstype source ...
        std::istringstream fields(line);
        std::string id, parent, device, mount_root, point, word;
        if (!(fields >> id >> parent >> device >> mount_root >> point)) continue;
        while (fields >> word && word != "-") {
        }
        std::string type;
        if (!(fields >> type) || type.rfind("fuse.bai", 0) != 0) continue;
        if (!is_at_or_below(decode_octal_escapes(point), base)) continue;
        size_t colon = device.find(':');
        if (colon == std::string::npos) continue;
        try {
            found.push_back(static_cast<unsigned>(std::stoul(device.substr(colon + 1))));
        } catch (const std::exception&) {
        }
    }
    return found;
}

bool fuse_mount_at(const std::filesystem::path& point, unsigned connection, std::string_view mountinfo) {
    const std::string device = "0:" + std::to_string(connection);
    std::istringstream lines{std::string(mountinfo)};
    std::string line;
    while (std::getline(lines, line)) {
        std::istringstream fields(line);
        std::string id, parent, dev, root, mount_point;
        if (fields >> id >> parent >> dev >> root >> mount_point && dev == device &&
            decode_octal_escapes(mount_point) == point.string()) {
            return true;
        }
    }
    return false;
}

void abort_fuse_connection(unsigned connection) {
    const std::filesystem::path control = "/sys/fs/fuse/connections";
    const std::filesystem::path abort_file = control / std::to_string(connection) / "abort";
    std::error_code ec;
    if (!std::filesystem::exists(abort_file, ec)) ::mount("fusectl", control.c_str(), "fusectl", 0, nullptr);
    std::ofstream out(abort_file);
    out << "1";
}

std::string read_mountinfo() {
    std::ifstream in("/proc/self/mountinfo");
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

std::vector<std::string> release_mounts_under(const std::filesystem::path& root) {
    const std::string mountinfo = read_mountinfo();
    std::error_code ec;
    std::filesystem::path absolute = std::filesystem::weakly_canonical(root, ec);
    if (ec) absolute = std::filesystem::absolute(root);
    for (unsigned connection : fuse_connections_under(absolute, mountinfo)) abort_fuse_connection(connection);
    std::vector<std::string> failed;
    for (const std::string& point : mounts_under(absolute, mountinfo)) {
        if (::umount2(point.c_str(), MNT_DETACH) != 0) failed.push_back(point);
    }
    return failed;
}

}  // namespace bai::mounts
