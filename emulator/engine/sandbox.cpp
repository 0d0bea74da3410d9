#include "emulator/engine/sandbox.h"

#include <algorithm>
#include <cctype>

namespace bai::engine {

std::vector<std::string> sandbox_command(const std::string& bwrap, const SandboxSpec& spec,
                                         const std::vector<std::string>& command) {
    std::vector<std::string> argv{bwrap, spec.root_writable ? "--bind" : "--ro-bind", spec.root.string(), "/",
                                  "--proc", "/proc", "--dev", "/dev", "--ro-bind", "/sys", "/sys"};
    for (const std::string& path : spec.host_read_only) argv.insert(argv.end(), {"--ro-bind-try", path, path});
    for (const std::string& device : spec.devices) {
        argv.insert(argv.end(), {"--dev-bind-try", device, device});
    }
    if (spec.shm_bytes) argv.insert(argv.end(), {"--size", std::to_string(*spec.shm_bytes)});
    argv.insert(argv.end(), {"--tmpfs", "/dev/shm", "--tmpfs", "/mnt"});
    for (const std::string& dir : spec.dirs) argv.insert(argv.end(), {"--dir", dir});
    for (const SandboxBind& bind : spec.binds) argv.insert(argv.end(), {"--bind", bind.host.string(), bind.view});
    argv.insert(argv.end(), {"--unshare-pid", "--unshare-uts", "--unshare-ipc", "--die-with-parent"});
    if (!spec.hostname.empty()) argv.insert(argv.end(), {"--hostname", spec.hostname});
    if (!spec.cwd.empty()) argv.insert(argv.end(), {"--chdir", spec.cwd});
    argv.push_back("--");
    argv.insert(argv.end(), command.begin(), command.end());
    return argv;
}

namespace {

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescape_octal(const std::string& field) {
    std::string out;
    for (size_t i = 0; i < field.size(); ++i) {
        if (field[i] == '\\' && i + 3 < field.size() && std::isdigit(static_cast<unsigned char>(field[i + 1])) &&
            std::isdigit(static_cast<unsigned char>(field[i + 2])) && std::isdigit(static_cast<unsigned char>(field[i + 3]))) {
            out += static_cast<char>(std::stoi(field.substr(i + 1, 3), nullptr, 8));
            i += 3;
        } else {
            out += field[i];
        }
    }
    return out;
}

}  // namespace

std::vector<std::string> system_submounts(const std::string& mountinfo) {
    std::vector<std::string> out;
    size_t start = 0;
    while (start < mountinfo.size()) {
        size_t end = mountinfo.find('\n', start);
        std::string line = mountinfo.substr(start, end == std::string::npos ? std::string::npos : end - start);
        start = end == std::string::npos ? mountinfo.size() : end + 1;
        // id parent major:minor root MOUNT-POINT options ...
        size_t field = 0, at = 0;
        std::string point;
        while (at < line.size() && field <= 4) {
            size_t space = line.find(' ', at);
            if (field == 4) point = line.substr(at, space == std::string::npos ? std::string::npos : space - at);
            at = space == std::string::npos ? line.size() : space + 1;
            ++field;
        }
        point = unescape_octal(point);
        for (const char* prefix : {"/usr/", "/lib/", "/lib64/", "/opt/", "/etc/"}) {
            if (point.rfind(prefix, 0) == 0 && std::find(out.begin(), out.end(), point) == out.end()) {
                out.push_back(point);
            }
        }
    }
    return out;
}

void order_binds(std::vector<SandboxBind>& binds) {
    // A parent path is a prefix of what lies in it, so it sorts first; ties keep their order.
    std::stable_sort(binds.begin(), binds.end(), [](const SandboxBind& a, const SandboxBind& b) {
        return std::count(a.view.begin(), a.view.end(), '/') < std::count(b.view.begin(), b.view.end(), '/');
    });
}

}  // namespace bai::engine
