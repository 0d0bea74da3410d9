#include "emulator/engine/sandbox.h"

#include <algorithm>

#include "fuse_mounts/manager/mount_table.h"

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
    for (const SandboxBind& bind : spec.binds) {
        argv.insert(argv.end(), {bind.read_only ? "--ro-bind" : "--bind", bind.host.string(), bind.view});
    }
    argv.insert(argv.end(), {"--unshare-pid", "--unshare-uts", "--unshare-ipc", "--die-with-parent"});
    if (!spec.hostname.empty()) argv.insert(argv.end(), {"--hostname", spec.hostname});
    if (!spec.cwd.empty()) argv.insert(argv.end(), {"--chdir", spec.cwd});
    argv.push_back("--");
    argv.insert(argv.end(), command.begin(), command.end());
    return argv;
}

std::vector<std::string> system_submounts(const std::string& mountinfo) {
    std::vector<std::string> out;
    for (const std::string& point : mounts::parse_mount_points(mountinfo)) {
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
