#include "emulator/daemon/host_programs.h"

#include <system_error>

namespace bai::daemon {

namespace fs = std::filesystem;

fs::path publish_host_program(const fs::path& location, const std::string& name, std::string& why) {
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    if (ec) {
        why = "cannot find the emulator's own executable: " + ec.message();
        return {};
    }
    // Installed side by side, or as built (build/emulator/ and build/fuse_mounts/).
    for (const fs::path& candidate : {self.parent_path() / name, self.parent_path().parent_path() / "fuse_mounts" / name}) {
        if (!fs::is_regular_file(candidate, ec)) continue;
        const fs::path published = location / "bin" / name;
        fs::create_directories(published.parent_path(), ec);
        // Into a new file, renamed over the old: a host running the old one keeps it.
        const fs::path partial = published.string() + ".partial";
        fs::copy_file(candidate, partial, fs::copy_options::overwrite_existing, ec);
        if (!ec) fs::permissions(partial, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                              fs::perms::others_read | fs::perms::others_exec, ec);
        if (!ec) fs::rename(partial, published, ec);
        if (ec) {
            why = "cannot copy " + candidate.string() + " to " + published.string() + ": " + ec.message();
            return {};
        }
        return published;
    }
    why = name + " is not beside " + self.string();
    return {};
}

}  // namespace bai::daemon
