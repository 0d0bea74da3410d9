#include "emulator/portal/portal_node_logs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "fake_storage/engine/share_paths.h"

namespace bai::portal {
namespace {

// `path` of the stdouterr directory ("." and "" the directory itself) as a path under the anchor;
// nullopt for an absolute path or one with a ".." part (it could reach another job's directory).
std::optional<std::string> under_anchor(const NodeLogsPlace& place, const std::string& path) {
    const std::filesystem::path p(path);
    if (p.is_absolute()) return std::nullopt;
    std::filesystem::path out(place.relative == "." ? std::string() : place.relative);
    for (const std::filesystem::path& part : p) {
        if (part == "..") return std::nullopt;
        if (part.empty() || part == ".") continue;
        out /= part;
    }
    return out.string();
}

}  // namespace

std::optional<nlohmann::json> list_node_logs(const NodeLogsPlace& place, const std::string& path, size_t max_entries) {
    const std::optional<std::string> where = under_anchor(place, path);
    if (!where) return std::nullopt;
    storage::ShareFd dir = storage::open_in_share(place.anchor, *where, O_RDONLY | O_DIRECTORY);
    if (!dir) return std::nullopt;
    DIR* stream = ::fdopendir(dir.get());
    if (!stream) return std::nullopt;
    dir.release();  // closedir closes it
    nlohmann::json items = nlohmann::json::array();
    while (dirent* e = ::readdir(stream)) {
        const std::string name = e->d_name;
        if (name == "." || name == "..") continue;
        struct stat st {};
        if (::fstatat(::dirfd(stream), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        const bool directory = S_ISDIR(st.st_mode);
        if (!directory && !S_ISREG(st.st_mode)) continue;  // links, fifos, devices: not shown
        items.push_back({{"name", name}, {"directory", directory}, {"size", directory ? 0 : st.st_size}});
        if (items.size() >= max_entries) break;
    }
    ::closedir(stream);
    std::sort(items.begin(), items.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
        return a["name"].get<std::string>() < b["name"].get<std::string>();
    });
    return items;
}

std::optional<NodeLogRead> read_node_log(const NodeLogsPlace& place, const std::string& path, std::uint64_t from,
                                         std::uint64_t max) {
    const std::optional<std::string> where = under_anchor(place, path);
    if (!where || where->empty()) return std::nullopt;
    storage::ShareFd file = storage::open_regular_in_share(place.anchor, *where, O_RDONLY | O_NONBLOCK);
    if (!file) return std::nullopt;
    struct stat st {};
    if (::fstat(file.get(), &st) != 0) return std::nullopt;
    NodeLogRead out;
    out.size = static_cast<std::uint64_t>(st.st_size);
    if (from < out.size) {
        out.bytes.resize(std::min(max, out.size - from));
        const ssize_t n = ::pread(file.get(), out.bytes.data(), out.bytes.size(), static_cast<off_t>(from));
        out.bytes.resize(n > 0 ? static_cast<size_t>(n) : 0);
    }
    return out;
}

}  // namespace bai::portal
