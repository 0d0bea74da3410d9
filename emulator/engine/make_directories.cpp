#include "emulator/engine/make_directories.h"

#include <sys/stat.h>

#include <cerrno>

namespace bai::engine {

namespace fs = std::filesystem;

void make_directories_below(const fs::path& base, const fs::path& path, std::error_code& ec) {
    ec.clear();
    const fs::path relative = path.lexically_normal().lexically_relative(base.lexically_normal());
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
