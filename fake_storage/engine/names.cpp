#include "fake_storage/engine/names.h"

#include "fake_storage/engine/storage_error.h"

namespace bai::storage {
namespace {

bool is_lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

bool follows_container_rule(std::string_view name) {
    if (name.size() < 3 || name.size() > 63) return false;
    if (!is_lower_alnum(name.front()) || !is_lower_alnum(name.back())) return false;
    for (size_t i = 0; i < name.size(); ++i) {
        char c = name[i];
        if (c == '-') {
            if (name[i - 1] == '-') return false;
        } else if (!is_lower_alnum(c)) {
            return false;
        }
    }
    return true;
}

}  // namespace

bool is_valid_container_name(std::string_view name) {
    return name == "$root" || name == "$logs" || name == "$web" || follows_container_rule(name);
}

bool is_valid_share_name(std::string_view name) { return follows_container_rule(name); }

bool is_valid_blob_name(std::string_view name) {
    if (name.empty() || name.size() > 1024) return false;
    if (name.find('\0') != std::string_view::npos) return false;
    return is_valid_utf8(name);
}

std::vector<std::string> split_share_path(std::string_view path) {
    if (path.size() > 2048) fail(400, "InvalidResourceName", "The path is longer than 2048 characters.");
    if (!is_valid_utf8(path)) fail(400, "InvalidResourceName", "The path is not valid UTF-8.");
    std::vector<std::string> parts;
    size_t start = 0;
    while (start <= path.size()) {
        size_t slash = path.find('/', start);
        if (slash == std::string_view::npos) slash = path.size();
        std::string_view part = path.substr(start, slash - start);
        if (!part.empty()) {
            if (part == "." || part == "..") {
                fail(400, "InvalidResourceName",
                     "The specifed resource name contains invalid characters: '" +
                         std::string(part) + "'.");
            }
            if (part.size() > 255) {
                fail(400, "InvalidResourceName", "A path component is longer than 255 characters.");
            }
            for (char c : part) {
                unsigned char u = static_cast<unsigned char>(c);
                if (u < 0x20 || c == '"' || c == '\\' || c == ':' || c == '|' || c == '<' ||
                    c == '>' || c == '*' || c == '?') {
                    fail(400, "InvalidResourceName",
                         "The specifed resource name contains invalid characters.");
                }
            }
            parts.emplace_back(part);
        } else if (slash != path.size() && start != 0) {
            fail(400, "InvalidResourceName", "The path has an empty component.");
        }
        start = slash + 1;
    }
    return parts;
}

}  // namespace bai::storage
