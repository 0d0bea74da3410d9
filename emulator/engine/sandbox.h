// The bubblewrap command that runs a job's process inside its node's sandbox: its own mount, pid,
// uts and ipc namespaces (the machine's network, so that MPI and the parameter servers reach the
// other nodes on loopback), a root (the job's writable layer over its image, or a root directory
// read-only), /proc, the machine's /sys read-only (hwloc reads the topology there), a minimal /dev with only the node's GPUs, a private /dev/shm, and the
// service's paths (/mnt/batch/tasks/shared/LS_root/...) bound to the node's directories.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace bai::engine {

// The service's root of mounts and job directories on a node, as a container saw it.
inline constexpr const char* kServiceRoot = "/mnt/batch/tasks/shared/LS_root";

struct SandboxBind {
    std::filesystem::path host;
    std::string view;  // absolute, inside the sandbox
    bool read_only = false;
};

struct SandboxSpec {
    std::filesystem::path root;
    bool root_writable = false;
    // Host paths bound read-only at the same place right after the root: what an overlay over the
    // host's root does not show (its lower layer stops at the mounts under it, e.g. a GPU driver's
    // libraries mounted at /usr/local/nvidia).
    std::vector<std::string> host_read_only;
    // Applied in order, after the root, /proc, /dev and a fresh tmpfs on /mnt: a bind's view must
    // lie in the root, in /mnt or in an earlier bind.
    std::vector<SandboxBind> binds;
    std::vector<std::string> dirs;     // made (empty) in /mnt before the binds
    std::vector<std::string> devices;  // host device nodes (GPUs) bound at the same path, when present
    std::string hostname;
    std::optional<std::uint64_t> shm_bytes;  // size of /dev/shm; bubblewrap's default without
    std::string cwd;                         // inside the sandbox
};

// bwrap's argv for `command` in that sandbox; the process's environment passes through unchanged.
std::vector<std::string> sandbox_command(const std::string& bwrap, const SandboxSpec& spec,
                                         const std::vector<std::string>& command);

// The binds in an order bubblewrap can apply: parents before what lies in them.
void order_binds(std::vector<SandboxBind>& binds);

// The mount points of a mountinfo text where system software lives (under /usr,
// /lib, /lib64, /opt, /etc), which an overlay whose lower layer is "/" would not show.
std::vector<std::string> system_submounts(const std::string& mountinfo);

}  // namespace bai::engine
