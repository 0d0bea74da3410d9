#include "emulator/engine/host_volumes.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <fstream>
#include <sstream>

#include "emulator/engine/node_hosts.h"
#include "emulator/engine/node_setup.h"
#include "emulator/engine/process.h"
#include "fuse_mounts/blob/blob_mount_options.h"

namespace bai::engine {

namespace fs = std::filesystem;

namespace {

// The points (of `points`) whose device the host sees differ from this machine's: not the mount
// made here. `error` gets the check's own failure, if any.
std::vector<fs::path> unseen_on_host(NodeHosts& hosts, const std::string& node_id, const std::string& step,
                                     const std::vector<fs::path>& points, std::string& error) {
    std::vector<std::string> argv = hosts.launch_prefix(node_id, step + "mount-check", "/");
    argv.insert(argv.end(), {"stat", "-c", "%d"});
    for (const fs::path& point : points) argv.push_back(point.string());
    const CommandOutput seen = run_command(argv, node_base_environment(), fs::temp_directory_path());
    if (seen.status.code != 0 && !seen.err.empty()) error = seen.err.substr(0, seen.err.find('\n'));
    std::istringstream lines(seen.out);
    std::vector<fs::path> unseen;
    for (const fs::path& point : points) {
        struct stat here {};
        std::string there;
        std::getline(lines, there);
        if (::stat(point.c_str(), &here) != 0 || there != std::to_string(static_cast<unsigned long long>(here.st_dev))) {
            unseen.push_back(point);
        }
    }
    return unseen;
}

// The last line the step's command wrote (srun's and slurmstepd's own lines after it say only that
// it exited or was cancelled), without bai-blobfuse's name; else the last line.
std::string last_line_of_step(const fs::path& file) {
    std::ifstream in(file);
    std::string line, last, own;
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        last = line;
        if (line.rfind("srun: ", 0) == 0 || line.rfind("slurmstepd", 0) == 0) continue;
        own = line;
        for (const std::string program : {"bai-blobfuse: ", "bai-sharefuse: "}) {
            if (line.rfind(program, 0) == 0) own = line.substr(program.size());
        }
    }
    return own.empty() ? last : own;
}

// Runs `command` (a shell's, the point as $1) on the node's host to unmount `point`; false when it
// failed or the node has no host any more.
bool unmount_on_host(NodeHosts& hosts, const std::string& node_id, const std::string& step, const fs::path& point,
                     const std::string& command) {
    try {
        std::vector<std::string> argv = hosts.launch_prefix(node_id, step + "-unmount", "/");
        argv.insert(argv.end(), {"/bin/sh", "-c", command, "bai-unmount", point.string()});
        return run_command(argv, node_base_environment(), fs::temp_directory_path()).status.code == 0;
    } catch (const std::exception&) {
        return false;
    }
}

// Writes `text` to `file`, readable by its owner alone (it holds a SAS).
void write_private(const fs::path& file, const std::string& text) {
    std::error_code ec;
    fs::create_directories(file.parent_path(), ec);
    const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) throw std::runtime_error("cannot write " + file.string() + ": " + std::strerror(errno));
    const bool written = ::fchmod(fd, 0600) == 0 && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ::close(fd);
    if (!written) throw std::runtime_error("cannot write " + file.string());
}

// The program that mounts a volume of the store on a host, and the words of its config file.
struct RemoteMount {
    const char* program;       // "bai-blobfuse"
    const char* what;          // "blob container"
    const char* volume_key;    // its config file's key for the volume's name
    const char* endpoint_key;  // ... and for the endpoint
    const char* fstype;        // what findmnt shows once it is mounted
};
constexpr RemoteMount kBlobMount{"bai-blobfuse", "blob container", "containerName", "blobEndpoint", "fuse.bai-blob"};
constexpr RemoteMount kShareMount{"bai-sharefuse", "file share", "shareName", "fileEndpoint", "fuse.bai-share"};

// Mounts the container (or share) at `point` on the node's host; "" once the host shows it mounted.
std::string mount_remote_on_host(NodeHosts& hosts, const std::string& node_id, const std::string& step,
                                 const fs::path& point, const arm::Volume& v, const RemoteMount& kind,
                                 const RemoteVolumeAccess& remote, const fs::path& scratch, AttachedVolumes& attached) {
    const std::string what = point.string() + " (the " + kind.what + " " + v.account + "/" + v.container + ")";
    if (remote.program.empty() || !remote.endpoint || !remote.sas) {
        return what + " is mounted on this machine, and the node's host does not see that mount; " + kind.program +
               ", which would mount it there, is not available (see the emulator's log)";
    }
    mounts::BlobFsOptions options;
    if (v.blob()) mounts::apply_blob_mount_options(v.mount_options, options);  // checked when mounted here
    const std::string sas = remote.sas(v.account, v.container, options.read_only);
    if (sas.empty()) return what + ": no storage account " + v.account;
    const fs::path config = scratch / (step + ".cfg");
    const fs::path log = scratch / (step + ".log");
    write_private(config, "accountName " + v.account + "\nsasToken " + sas + "\n" + kind.volume_key + " " + v.container +
                              "\n" + kind.endpoint_key + " " + remote.endpoint() + "/" + v.account + "\n");
    try {
        hosts.copy_to_host(node_id, {point, config});  // where the host does not see them here
    } catch (const std::exception& e) {
        return what + ": " + e.what();
    }
    std::vector<std::string> argv = hosts.launch_prefix(node_id, step, "/");
    // Files being written are staged on the host's own disk (the shared one may not take O_TMPFILE).
    argv.insert(argv.end(), {remote.program.string(), point.string(), "--config-file=" + config.string(),
                             "--tmp-path=/tmp/" + std::string(kind.program) + "-" + node_id + "-" + step});
    if (v.blob()) {
        std::istringstream words(v.mount_options);
        for (std::string word; words >> word;) argv.push_back(word);
    }
    std::unique_ptr<Process> process = Process::start({argv, node_base_environment(), "/", log, log});
    // The host shows the mount (of its type), or the program is gone from it (given a few seconds
    // to start there), or a minute passes.
    std::vector<std::string> check = hosts.launch_prefix(node_id, step + "-check", "/");
    check.insert(check.end(),
                 {"/bin/sh", "-c",
                  "i=0; while [ $i -lt 600 ]; do "
                  "[ \"$(findmnt -n -o FSTYPE --mountpoint \"$1\")\" = \"$3\" ] && exit 0; "
                  "[ $i -gt 50 ] && ! pgrep -f -- \"--config-file=$2\" >/dev/null && exit 3; "
                  "i=$((i+1)); sleep 0.1; done; exit 4",
                  "bai-mount-check", point.string(), config.string(), kind.fstype});
    const CommandOutput checked = run_command(check, node_base_environment(), fs::temp_directory_path());
    if (checked.status.code != 0) {
        process->kill_group(SIGTERM);
        process->wait();
        std::string why = last_line_of_step(log);
        if (why.empty()) why = checked.err.substr(0, checked.err.find('\n'));
        return what + ": " + kind.program + " did not mount it on the node's host" + (why.empty() ? "" : ": " + why);
    }
    NodeHosts* on = &hosts;
    attached.host_mounts.push_back({std::move(process), [on, node_id, step, point] {
        return unmount_on_host(*on, node_id, step, point, "fusermount3 -u \"$1\" || fusermount3 -u -z \"$1\"");
    }});
    return "";
}


// Runs an unmanaged file system's mountCommand on the node's host, with the mount point appended,
// as attach_unmanaged does here (five minutes at most); unmounted there at release.
std::string mount_command_on_host(NodeHosts& hosts, const std::string& node_id, const std::string& step,
                                  const fs::path& point, const arm::Volume& v, const fs::path& scratch,
                                  AttachedVolumes& attached) {
    const fs::path log = scratch / (step + ".log");
    std::error_code ec;
    fs::create_directories(scratch, ec);
    fs::remove(log, ec);
    try {
        hosts.copy_to_host(node_id, {point});  // where the host does not see it here
    } catch (const std::exception& e) {
        return "cannot mount the unmanaged file system at " + v.relative + " on the node's host: " + e.what();
    }
    std::vector<std::string> argv = hosts.launch_prefix(node_id, step, point.parent_path());
    argv.insert(argv.end(), {"timeout", "300", "/bin/sh", "-c", v.mount_command + " \"$1\"", "bai-mount", point.string()});
    const ExitStatus status = Process::start({argv, node_base_environment(), "/", log, log})->wait();
    if (status.code != 0) {
        return "cannot mount the unmanaged file system at " + v.relative + " on the node's host: its mountCommand (" +
               v.mount_command + ") exited with " + std::to_string(status.code) + ": " + last_line_of_step(log);
    }
    NodeHosts* on = &hosts;
    attached.host_mounts.push_back({nullptr, [on, node_id, step, point] {
        return unmount_on_host(*on, node_id, step, point, "umount \"$1\" || umount -l \"$1\"");
    }});
    return "";
}

}  // namespace

std::string attach_on_host(NodeHosts& hosts, const std::string& node_id, const std::string& step, const fs::path& root,
                           const std::vector<arm::Volume>& volumes, const StorageAccess& storage,
                           const fs::path& scratch, AttachedVolumes& attached) {
    int mounted = 0;
    std::vector<fs::path> blob_points;
    for (const arm::Volume& v : volumes) {
        if (!v.invalid.empty()) continue;
        if (v.kind == arm::Volume::Kind::unmanaged) {
            std::string why = mount_command_on_host(hosts, node_id, step + "mount-" + std::to_string(mounted++),
                                                    root / v.relative, v, scratch, attached);
            if (!why.empty()) return why;
        }
        if (v.kind == arm::Volume::Kind::file_share && attached.settings().remote_shares) {
            std::string why = mount_remote_on_host(hosts, node_id, step + "mount-" + std::to_string(mounted++),
                                                   root / v.relative, v, kShareMount, storage.remote_shares, scratch,
                                                   attached);
            if (!why.empty()) return why;
        }
        if (v.blob()) blob_points.push_back(root / v.relative);
    }
    if (blob_points.empty()) return "";
    std::string error;
    for (const fs::path& point : unseen_on_host(hosts, node_id, step, blob_points, error)) {
        const arm::Volume* volume = nullptr;
        for (const arm::Volume& v : volumes) {
            if (v.blob() && root / v.relative == point) volume = &v;
        }
        std::string why = mount_remote_on_host(hosts, node_id, step + "mount-" + std::to_string(mounted++), point, *volume,
                                               kBlobMount, storage.remote_blobs, scratch, attached);
        if (!why.empty()) return why + (error.empty() ? "" : " (" + error + ")");
    }
    return "";
}

}  // namespace bai::engine
