#include "common/text/file_share_url.h"

#include <cctype>
#include <vector>

namespace bai::text {
namespace {

// "127.0.0.1:10004", "localhost:10004", "[::1]:10004": an emulator host, whose URLs are path style.
bool path_style_host(std::string_view host) {
    return host.empty() || std::isdigit(static_cast<unsigned char>(host[0])) || host[0] == '[' ||
           host.substr(0, 9) == "localhost";
}

}  // namespace

std::optional<FileShareUrl> parse_file_share_url(std::string_view url) {
    size_t scheme = url.find("//");
    std::string_view rest = scheme == std::string_view::npos ? url : url.substr(scheme + 2);
    std::vector<std::string_view> parts;  // the non-empty segments: host, then the path's
    for (size_t start = 0; start <= rest.size();) {
        size_t slash = rest.find('/', start);
        if (slash == std::string_view::npos) slash = rest.size();
        if (slash > start) parts.push_back(rest.substr(start, slash - start));
        start = slash + 1;
    }
    if (parts.size() < 2) return std::nullopt;
    if (path_style_host(parts[0])) {
        if (parts.size() < 3) return std::nullopt;
        return FileShareUrl{std::string(parts[1]), std::string(parts[2])};
    }
    return FileShareUrl{std::string(parts[0].substr(0, parts[0].find('.'))), std::string(parts[1])};
}

}  // namespace bai::text
