#include "emulator/engine/make_directories.h"

#include <sys/stat.h>

#include <cerrno>

namespace bai::engine {

namespace fs = std::filesystem;

namespace {

bool has_dots(const fs::path& path) {
    for (const fs::path& part : path) {
        if (part == "." || part == "..") return true;
    }
    return false;
}

}  // namespace

void make_directories_below(const fs::path& base, const fs::path& path, std::error_code& ec) {
    ec.clear();
    // (A ".." after a link leads to the link's target's parent, not back up the text: such a path
    // is left to create_directories, which walks it as the system does.)
    const fs::path relative = has_dots(base) || has_dots(path) ? fs::path() : path.lexically_relative(base);
    bool below = !relative.empty() && relative != ".";
    for (const fs::path& part : relative) {
        if (part == ".." || part == ".") below = false;
    }
    if (!below) {
        fs::create_directories(path, ec);
        return;
    }
    fs::path made = base;
    int last_error = 0;
    bool first = true;
    for (const fs::path& part : relative) {
        if (part.empty()) continue;  // a trailing separator
        made /= part;
        last_error = ::mkdir(made.c_str(), 0777) == 0 ? 0 : errno;
        if (first && last_error == ENOENT) {  // no base after all: made as create_directories makes it
            fs::create_directories(path, ec);
            return;
        }
        first = false;
        if (last_error != 0 && last_error != EEXIST) {
            ec.assign(last_error, std::generic_category());
            return;
        }
    }
    // The last level was there already: a directory (or a link to one) is what was asked.
    if (last_error == EEXIST && !fs::is_directory(made, ec) && !ec) ec = std::make_error_code(std::errc::not_a_directory);
}

}  // namespace bai::engine
