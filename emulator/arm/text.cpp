#include "emulator/arm/text.h"

namespace bai::arm {

std::vector<std::string> split_path(std::string_view path) {
    std::vector<std::string> segments;
    size_t start = 0;
    while (start <= path.size()) {
        size_t slash = path.find('/', start);
        if (slash == std::string_view::npos) slash = path.size();
        if (slash > start) segments.emplace_back(path.substr(start, slash - start));
        start = slash + 1;
    }
    return segments;
}

}  // namespace bai::arm
