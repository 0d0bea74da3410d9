#include "emulator/arm/odata_filter.h"

#include <cctype>
#include <memory>
#include <optional>
#include <vector>

#include "common/text/ascii.h"

namespace bai::arm {

using nlohmann::json;

namespace {

// The value at a path ("properties/provisioningState"), or null.
json value_at(const json& document, const std::string& path) {
    const json* at = &document;
    size_t start = 0;
    while (start <= path.size()) {
        size_t slash = path.find('/', start);
        const std::string name = path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
        if (!at->is_object() || !at->contains(name)) return nullptr;
        at = &(*at)[name];
        if (slash == std::string::npos) break;
        start = slash + 1;
    }
    return *at;
}

}  // namespace

DocumentFilter parse_odata_filter(const std::string& text) {
    auto filter = std::make_shared<odata::Filter>(odata::Filter::parse(text, odata::Case::insensitive));
    return [filter](const json& document) { return filter->matches(document); };
}

json select_paths(const json& document, const std::string& select) {
    json out = json::object();
    if (document.contains("id")) out["id"] = document["id"];
    size_t start = 0;
    while (start <= select.size()) {
        size_t comma = select.find(',', start);
        std::string path = select.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        while (!path.empty() && std::isspace(static_cast<unsigned char>(path.front()))) path.erase(path.begin());
        while (!path.empty() && std::isspace(static_cast<unsigned char>(path.back()))) path.pop_back();
        if (path.empty()) throw FilterError("$select: an empty property path in '" + select + "'");
        json value = value_at(document, path);
        if (!value.is_null()) {
            json* at = &out;
            size_t from = 0;
            for (size_t slash = path.find('/'); slash != std::string::npos; slash = path.find('/', from)) {
                at = &(*at)[path.substr(from, slash - from)];
                from = slash + 1;
            }
            (*at)[path.substr(from)] = value;
        }
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return out;
}

}  // namespace bai::arm
