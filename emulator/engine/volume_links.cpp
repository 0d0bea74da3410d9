#include "emulator/engine/volume_links.h"

#include <csignal>

#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <climits>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "common/log/logger.h"
#include "emulator/engine/node_view.h"
#include "emulator/engine/process.h"
#include "fake_storage/engine/storage_error.h"
#include "fuse_mounts/blob/blob_mount_options.h"
#include "fuse_mounts/manager/mount_table.h"

namespace bai::engine {

namespace fs = std::filesystem;

void AttachedVolumes::release_on_hosts() {
    for (HostMount& mount : host_mounts) {
        const bool unmounted = mount.unmount();
        if (!mount.process) continue;
        if (!unmounted) mount.process->kill_group(SIGTERM);
        mount.process->wait();
    }
    host_mounts.clear();
}

void AttachedVolumes::release() {
    release_on_hosts();
    for (auto& mount : mounts) mount->unmount();
    mounts.clear();
    for (auto& mount : blob_mounts) mount->unmount();
    blob_mounts.clear();
    for (const fs::path& point : command_mounts) {
        for (const std::string& left : mounts::release_mounts_under(point)) log::warning("could not unmount " + left);
    }
    command_mounts.clear();
    disk_followers.clear();
}

namespace {

// An empty directory at `at` (whatever a previous run left there goes, unless it is mounted).
void fresh_mount_point(const fs::path& at) {
    std::error_code ec;
    fs::create_directories(at.parent_path(), ec);
    fs::remove(at, ec);
    fs::create_directory(at, ec);
}

// Without FUSE: a link to `directory` at `at` (or, for a container to bind it there, nothing).
void link_instead(const fs::path& at, const fs::path& directory, bool links, const std::string& what) {
    if (!links) return;
    std::error_code ec;
    fs::remove(at, ec);
    fs::create_directory_symlink(directory, at, ec);
    if (ec) throw std::runtime_error("cannot mount " + what + " at " + at.string() + ": " + ec.message());
}

// Binds `directory` at `at` (nosuid, nodev, private); false with the reason when the kernel refuses.
bool bind_directory(const fs::path& directory, const fs::path& at, std::string& why) {
    if (::mount(directory.c_str(), at.c_str(), nullptr, MS_BIND, nullptr) != 0) {
        why = "cannot bind-mount " + directory.string() + ": " + std::strerror(errno);
        return false;
    }
    if (::mount(nullptr, at.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV, nullptr) != 0) {
        why = "cannot make the bind mount nosuid,nodev: " + std::string(std::strerror(errno));
        ::umount2(at.c_str(), MNT_DETACH);
        return false;
    }
    // Private: what a job mounts under it stays there, never showing up in the store's directory.
    if (::mount(nullptr, at.c_str(), nullptr, MS_PRIVATE, nullptr) != 0) {
        why = "cannot make the bind mount private: " + std::string(std::strerror(errno));
        ::umount2(at.c_str(), MNT_DETACH);
        return false;
    }
    return true;
}

void attach_share(const fs::path& at, const arm::Volume& v, const StorageAccess& storage, std::vector<std::string>& notes,
                  AttachedVolumes& attached, bool links) {
    try {
        storage.files.get_share(v.account, v.container);
    } catch (const storage::StorageError&) {
        throw std::runtime_error("cannot mount the file share " + v.container + " of storage account " + v.account +
                                 " at " + v.relative + ": the share does not exist");
    }
    fresh_mount_point(at);
    std::string why;
    if (attached.settings().remote_shares) {
        attached.disk_followers.push_back(storage.files.follow_disk_writes(v.account, v.container));
        attached.directories.emplace_back(v.relative, at);
        notes.push_back("file share " + v.account + "/" + v.container + " at " + at.string() +
                        " (mounted on the node's host through the File REST API)");
        return;
    }
    if (attached.settings().link_shares) {
        const fs::path share_dir = storage.files.share_root(v.account, v.container);
        link_instead(at, share_dir, true, v.account + "/" + v.container);
        attached.disk_followers.push_back(storage.files.follow_disk_writes(v.account, v.container));
        attached.directories.emplace_back(v.relative, share_dir);
        notes.push_back("file share " + v.account + "/" + v.container + " at " + at.string() +
                        " (a link to its directory, which the hosts share)");
        return;
    }
    if (attached.settings().bind_shares && v.file_mode == 0777 && v.directory_mode == 0777) {
        const fs::path share_dir = storage.files.share_root(v.account, v.container);
        if (bind_directory(share_dir, at, why)) {
            attached.command_mounts.push_back(at);
            attached.disk_followers.push_back(storage.files.follow_disk_writes(v.account, v.container));
            attached.directories.emplace_back(v.relative, share_dir);
            notes.push_back("file share " + v.account + "/" + v.container + " at " + at.string() +
                            " (a bind mount of its directory)");
            return;
        }
        log::warning("file share " + v.account + "/" + v.container + ": " + why + "; mounting it through FUSE");
    }
    try {
        mounts::ShareFsOptions options;
        options.faults = attached.settings().faults;
        options.passthrough = attached.settings().passthrough;
        options.file_mode = v.file_mode;
        options.dir_mode = v.directory_mode;
        auto mount = std::make_unique<mounts::ShareFs>(storage.files, v.account, v.container, options);
        mount->mount(at);
        const bool passes_through = mount->passes_through();
        attached.mounts.push_back(std::move(mount));
        attached.directories.emplace_back(v.relative, at);
        notes.push_back("file share " + v.account + "/" + v.container + " at " + at.string() +
                        (passes_through ? " (FUSE, passthrough)" : " (FUSE)"));
        return;
    } catch (const std::exception& e) {
        why = e.what();
    }
    const fs::path share_dir = storage.files.share_root(v.account, v.container);
    link_instead(at, share_dir, links, v.account + "/" + v.container);
    attached.directories.emplace_back(v.relative, share_dir);
    notes.push_back("file share " + v.account + "/" + v.container + " at " + at.string() + " (" +
                    (links ? "a link" : "bound") + " to its directory: " + why + ")");
}

void attach_blob_container(const fs::path& at, const arm::Volume& v, const StorageAccess& storage,
                           std::vector<std::string>& notes, AttachedVolumes& attached) {
    const std::string what = "the blob container " + v.container + " of storage account " + v.account;
    try {
        storage.blobs.get_container(v.account, v.container);
    } catch (const storage::StorageError&) {
        throw std::runtime_error("cannot mount " + what + " at " + v.relative + ": the container does not exist");
    }
    mounts::BlobFsOptions options;
    try {
        mounts::apply_blob_mount_options(v.mount_options, options);
    } catch (const std::invalid_argument& e) {
        throw std::runtime_error("cannot mount " + what + " at " + v.relative + ": mountOptions: " + e.what());
    }
    options.staging_dir = storage.staging_dir;
    options.faults = attached.settings().faults;
    fresh_mount_point(at);
    try {
        auto mount = std::make_unique<mounts::BlobFs>(storage.blobs, storage.content, v.account, v.container, options);
        mount->mount(at);
        attached.blob_mounts.push_back(std::move(mount));
        notes.push_back("blob container " + v.account + "/" + v.container + " at " + at.string() + " (FUSE" +
                        (options.read_only ? ", read-only)" : ")"));
    } catch (const std::exception& e) {
        notes.push_back("blob container " + v.account + "/" + v.container + " at " + at.string() +
                        ": an empty local directory (cannot mount: " + e.what() + ")");
    }
    attached.directories.emplace_back(v.relative, at);
}

// NFS's "ro" among a file server's mountOptions ("rw,hard,intr", or "-o ro"); the others are
// accepted and change nothing here.
bool read_only_option(const std::string& text) {
    std::string words = text;
    for (char& c : words) {
        if (c == ',') c = ' ';
    }
    std::istringstream in(words);
    bool read_only = false;
    for (std::string word; in >> word;) {
        if (word == "ro") read_only = true;
        if (word == "rw") read_only = false;
    }
    return read_only;
}

// A file server's export, with its sourceDirectory: a path on the server, absolute (under its
// mountPoint) or relative to it, that must exist.
fs::path file_server_directory(const arm::Volume& v, const StorageAccess& storage) {
    if (!storage.file_server_export) throw std::runtime_error("file servers cannot be mounted here");
    FileServerExport server = storage.file_server_export(v.file_server_id);
    std::string source = v.source_directory;
    if (!server.mount_point.empty() && source.starts_with(server.mount_point)) source.erase(0, server.mount_point.size());
    while (source.starts_with("/")) source.erase(0, 1);
    if (source.empty()) return server.directory;
    fs::path directory = (server.directory / source).lexically_normal();
    std::error_code ec;
    if (directory.lexically_relative(server.directory).string().starts_with("..") || !fs::is_directory(directory, ec)) {
        throw std::runtime_error("cannot mount the file server " + v.file_server_id + " at " + v.relative +
                                 ": its sourceDirectory " + v.source_directory + " does not exist");
    }
    return directory;
}

void attach_file_server(const fs::path& at, const arm::Volume& v, const StorageAccess& storage,
                        std::vector<std::string>& notes, AttachedVolumes& attached, bool links) {
    const fs::path directory = file_server_directory(v, storage);
    fresh_mount_point(at);
    std::string why;
    if (attached.settings().link_shares) {
        link_instead(at, directory, true, "file server " + v.file_server_id);
        attached.directories.emplace_back(v.relative, directory);
        notes.push_back("file server " + v.file_server_id + " at " + at.string() + " (a link to its export " +
                        directory.string() + ", which the hosts share)");
        return;
    }
    try {
        mounts::ShareFsOptions options;
        options.read_only = read_only_option(v.mount_options);
        options.passthrough = attached.settings().passthrough;
        auto mount = std::make_unique<mounts::ShareFs>(directory, "fileserver:" + directory.filename().string(), options);
        mount->mount(at);
        attached.mounts.push_back(std::move(mount));
        attached.directories.emplace_back(v.relative, at);
        notes.push_back("file server " + v.file_server_id + " at " + at.string() + " (FUSE, its export " +
                        directory.string() + ")");
        return;
    } catch (const std::exception& e) {
        why = e.what();
    }
    link_instead(at, directory, links, "file server " + v.file_server_id);
    attached.directories.emplace_back(v.relative, directory);
    notes.push_back("file server " + v.file_server_id + " at " + at.string() + " (a link to its export: " + why + ")");
}

std::string tail_of(const fs::path& path, size_t limit) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    std::string s = text.str();
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s.size() > limit ? "..." + s.substr(s.size() - limit) : s;
}

// Runs mountCommand with the mount path appended, as root, as Batch AI did on its nodes.
void attach_unmanaged(const fs::path& at, const arm::Volume& v, std::vector<std::string>& notes,
                      AttachedVolumes& attached) {
    fresh_mount_point(at);
    if (attached.settings().link_shares) {  // run on the node's host instead (host_volumes.h)
        attached.directories.emplace_back(v.relative, at);
        notes.push_back("unmanaged file system at " + at.string() + " (" + v.mount_command + ", on the node's host)");
        return;
    }
    const fs::path log = at.parent_path() / (".mount-" + at.filename().string() + ".log");
    std::error_code ec;
    fs::remove(log, ec);
    ProcessSpec spec;
    spec.argv = {"timeout", "300", "/bin/sh", "-c", v.mount_command + " " + shell_quote(at.string())};
    spec.env = {{"PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}};
    spec.cwd = at.parent_path();
    spec.stdout_path = log;
    spec.stderr_path = log;
    ExitStatus status = Process::start(spec)->wait();
    if (status.code != 0) {
        throw std::runtime_error("cannot mount the unmanaged file system at " + v.relative + ": its mountCommand (" +
                                 v.mount_command + ") exited with " + std::to_string(status.code) + ": " +
                                 tail_of(log, 400));
    }
    attached.command_mounts.push_back(at);
    attached.directories.emplace_back(v.relative, at);
    notes.push_back("unmanaged file system at " + at.string() + " (" + v.mount_command + ")");
}

}  // namespace

void attach_volumes(const fs::path& root, const std::vector<arm::Volume>& volumes, const StorageAccess& storage,
                    std::vector<std::string>& notes, AttachedVolumes& attached, bool links) {
    for (const arm::Volume& v : volumes) {
        const fs::path at = root / v.relative;
        if (!v.invalid.empty()) throw std::runtime_error("cannot mount " + v.relative + ": " + v.invalid);
        switch (v.kind) {
            case arm::Volume::Kind::file_share: attach_share(at, v, storage, notes, attached, links); break;
            case arm::Volume::Kind::blob_container: attach_blob_container(at, v, storage, notes, attached); break;
            case arm::Volume::Kind::file_server: attach_file_server(at, v, storage, notes, attached, links); break;
            case arm::Volume::Kind::unmanaged: attach_unmanaged(at, v, notes, attached); break;
        }
    }
}

std::optional<fs::path> backing_directory(const arm::Volume& v, const StorageAccess& storage) {
    if (!v.invalid.empty()) return std::nullopt;
    switch (v.kind) {
        case arm::Volume::Kind::file_share: return storage.files.share_root(v.account, v.container);
        case arm::Volume::Kind::file_server: return file_server_directory(v, storage);
        default: return std::nullopt;
    }
}

BackingDirectories backing_directories(const fs::path& root, const std::vector<arm::Volume>& volumes,
                                       const StorageAccess& storage) {
    BackingDirectories out;
    for (const arm::Volume& v : volumes) {
        try {
            if (std::optional<fs::path> dir = backing_directory(v, storage)) out.emplace_back(root / v.relative, *dir);
        } catch (const std::exception&) {
            // not attached either
        }
    }
    return out;
}

fs::path in_backing_directory(const fs::path& path, const BackingDirectories& directories) {
    for (const auto& [mount, dir] : directories) {
        if (std::optional<fs::path> stored = rebase(path, mount, dir)) return *stored;
    }
    return path;
}

namespace {

// Where a directory really is, its links resolved: what the kernel says of it opened (three
// system calls, where weakly_canonical reads each component of a deep path as a link), else
// weakly_canonical (a directory that is not there).
fs::path real_directory(const fs::path& dir, std::error_code& ec) {
    ec.clear();
    const int fd = ::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        char target[PATH_MAX];
        const ssize_t n = ::readlink(("/proc/self/fd/" + std::to_string(fd)).c_str(), target, sizeof target);
        ::close(fd);
        if (n > 0 && n < static_cast<ssize_t>(sizeof target) && target[0] == '/') return fs::path(std::string(target, n));
    }
    return fs::weakly_canonical(dir, ec);
}

}  // namespace

void adopt_share_writes(storage::FileStore& files, const std::vector<fs::path>& directories) {
    std::error_code ec;
    const fs::path store = real_directory(files.storage_root(), ec);
    for (const fs::path& dir : directories) {
        fs::path real = real_directory(dir, ec);
        if (ec) continue;
        fs::path rel = real.lexically_relative(store);
        auto it = rel.begin();
        if (rel.empty() || *it == "..") continue;
        // ACCOUNT/shares/SHARE/rest...
        std::vector<std::string> parts;
        for (; it != rel.end(); ++it) parts.push_back(it->string());
        if (parts.size() < 3 || parts[1] != "shares") continue;
        std::string inside;
        for (size_t i = 3; i < parts.size(); ++i) inside += (inside.empty() ? "" : "/") + parts[i];
        try {
            files.adopt_disk_changes(parts[0], parts[2], inside);
        } catch (const std::exception& e) {
            log::warning("could not index what was written in " + dir.string() + ": " + e.what());
        }
    }
}

}  // namespace bai::engine
