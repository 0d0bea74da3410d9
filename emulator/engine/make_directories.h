// Directories made below one that is known to exist, without first looking at each missing one.
//
// std::filesystem::create_directories looks at the path and then at each missing parent from the
// bottom up (a stat per level, each walking the whole path) before it makes them. A job's
// stdouterr directory is ten new levels below its job directory (the service's
// <prefix>/<subscription>/<group>/workspaces/... layout): on this project's VM (tmpfs) the looking
// took 30 of the 80 us that making such a path took, and a 1000-job replay makes 1000 of them.
#pragma once

#include <filesystem>
#include <system_error>

namespace bai::engine {

// Makes `path` and its missing parents, as create_directories does, where `path` lies lexically
// below `base`, a directory that should exist: each level below `base` is made top-down with one
// mkdir (one already there, or a link to a directory, is gone through). Any other path, one with
// a "." or ".." in it or its base, or a `base` that is not there, goes to create_directories.
// `ec` is set as create_directories sets it (a level that is a file: not a directory).
void make_directories_below(const std::filesystem::path& base, const std::filesystem::path& path,
                            std::error_code& ec);

}  // namespace bai::engine
