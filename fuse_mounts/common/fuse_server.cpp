#define FUSE_USE_VERSION 312
#include "fuse_mounts/common/fuse_server.h"

#include <fuse_lowlevel.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <fstream>
#include <stdexcept>
#include <vector>

#include "fuse_mounts/manager/mount_table.h"

namespace bai::mounts {

bool FuseServer::ended() const { return session_ && loop_ended_; }

void FuseServer::start(const fuse_lowlevel_ops& ops, void* userdata, const std::filesystem::path& mountpoint,
                       const FuseMountSpec& spec) {
    if (session_) throw std::runtime_error("already mounted at " + mountpoint_.string());
    std::vector<std::string> words{spec.subtype, "-o", "fsname=" + spec.fsname, "-o", "subtype=" + spec.subtype};
    if (spec.kernel_permissions) words.insert(words.end(), {"-o", "default_permissions"});
    if (::geteuid() == 0) words.insert(words.end(), {"-o", "allow_other"});
    if (spec.read_only) words.insert(words.end(), {"-o", "ro"});
    std::vector<char*> argv;
    for (std::string& w : words) argv.push_back(w.data());
    fuse_args args = FUSE_ARGS_INIT(static_cast<int>(argv.size()), argv.data());
    session_ = fuse_session_new(&args, &ops, sizeof ops, userdata);
    fuse_opt_free_args(&args);
    if (!session_) throw std::runtime_error("cannot start a FUSE session for " + spec.fsname);
    if (fuse_session_mount(session_, mountpoint.c_str()) != 0) {
        fuse_session_destroy(session_);
        session_ = nullptr;
        throw std::runtime_error("cannot mount " + spec.fsname + " at " + mountpoint.string());
    }
    mountpoint_ = mountpoint;
    if (spec.passthrough) channel_ = PassthroughChannel::install(session_);  // null: served as before
    fuse_session* session = session_;
    loop_ended_ = false;
    loop_ = std::thread([this, session] {
        fuse_loop_config* config = fuse_loop_cfg_create();
        fuse_loop_cfg_set_clone_fd(config, 0);
        fuse_loop_cfg_set_idle_threads(config, 4);
        fuse_session_loop_mt(session, config);
        fuse_loop_cfg_destroy(config);
        loop_ended_ = true;  // (the loop resets the session's exited flag as it returns)
    });
    // (A stat of the mount point is a request: only once the loop serves.)
    struct stat st {};
    connection_ = 0;
    if (::stat(mountpoint.c_str(), &st) == 0) {
        connection_ = minor(st.st_dev);
        // The kernel reads ahead 128 KiB at a time on a FUSE mount: 1 MiB (what one request can
        // carry, max_write) cuts the requests of a sequential read by 8. Root only; best effort.
        std::ofstream readahead("/sys/class/bdi/" + std::to_string(major(st.st_dev)) + ":" +
                                std::to_string(minor(st.st_dev)) + "/read_ahead_kb");
        readahead << "1024\n";
    }
}

void FuseServer::interrupt() {
    if (!session_ || interrupted_) return;
    interrupted_ = true;
    fuse_session_exit(session_);
    // Abort first, while the mount still holds its device number: once unmounted, the number
    // (the connection's name under /sys/fs/fuse/connections) is free and the next mount made on
    // this machine, by this process or another, may take it, and the abort would break that one.
    // Only while the mount point still shows that device (0:N in mountinfo, which sends no
    // request to this server): unmounted from outside, the number may be another's already.
    if (connection_ != 0 && fuse_mount_at(mountpoint_, connection_, read_mountinfo())) abort_fuse_connection(connection_);
    ::umount2(mountpoint_.c_str(), MNT_DETACH);
    if (loop_.joinable()) loop_.join();
}

void FuseServer::stop() {
    if (!session_) return;
    interrupt();
    interrupted_ = false;
    fuse_session_unmount(session_);
    fuse_session_destroy(session_);
    session_ = nullptr;
    connection_ = 0;
    channel_.reset();
}

}  // namespace bai::mounts
