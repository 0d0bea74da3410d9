// What the kernel has mounted (from /proc/self/mountinfo), and releasing what a run left behind.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace bai::mounts {

// This process's /proc/self/mountinfo.
std::string read_mountinfo();

// The mount points listed in a mountinfo text, octal escapes (\040) decoded, in file order.
std::vector<std::string> parse_mount_points(std::string_view mountinfo);

// Mount points at or below `root`, deepest first.
std::vector<std::string> mounts_under(const std::filesystem::path& root,
                                      std::string_view mountinfo);

// The FUSE connections (the mounts' minor device numbers) of this emulator's filesystems (type
// fuse.bai-*) at or below `root`, in a mountinfo text.
std::vector<unsigned> fuse_connections_under(const std::filesystem::path& root, std::string_view mountinfo);

// Whether a mountinfo text shows `point` mounted from anonymous device 0:connection (a FUSE mount,
// whose minor number names its connection).
bool fuse_mount_at(const std::filesystem::path& point, unsigned connection, std::string_view mountinfo);

// Ends a FUSE connection through fusectl (mounted on /sys/fs/fuse/connections when it is not): its
// pending and later requests fail with ENOTCONN, and whoever waited on them (a process of a job,
// or a thread of a killed emulator flushing its files at exit) goes on.
void abort_fuse_connection(unsigned connection);

// Detaches every mount at or below `root` (stale FUSE mounts of a crashed run, or the mounts of
// this run at stop), after aborting the connections of this emulator's FUSE filesystems there (a
// crashed server's mount would otherwise hang whoever touches it). Returns the mount points it
// could not release.
std::vector<std::string> release_mounts_under(const std::filesystem::path& root);

}  // namespace bai::mounts
