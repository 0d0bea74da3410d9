// What the kernel has mounted (from /proc/self/mountinfo), and releasing what a run left behind.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace bai::mounts {

// The mount points listed in a mountinfo text, octal escapes (\040) decoded, in file order.
std::vector<std::string> parse_mount_points(std::string_view mountinfo);

// Mount points at or below `root`, deepest first.
std::vector<std::string> mounts_under(const std::filesystem::path& root,
                                      std::string_view mountinfo);

// Detaches every mount at or below `root` (stale FUSE mounts of a crashed run, or the mounts of
// this run at stop). Returns the mount points it could not release.
std::vector<std::string> release_mounts_under(const std::filesystem::path& root);

}  // namespace bai::mounts
