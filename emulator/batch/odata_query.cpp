#include "emulator/batch/odata_query.h"

#include <cctype>
#include <stdexcept>

namespace bai::batch {

using nlohmann::json;

std::vector<std::string> parse_select(std::string_view text) {
    std::vector<std::string> out;
    size_t at = 0;
    while (at <= text.size()) {
        size_t comma = text.find(',', at);
        if (comma == std::string_view::npos) comma = text.size();
        std::string_view name = text.substr(at, comma - at);
        while (!name.empty() && std::isspace(static_cast<unsigned char>(name.front()))) name.remove_prefix(1);
        while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back()))) name.remove_suffix(1);
        if (name.empty()) throw std::invalid_argument("$select: an empty property name");
        for (char c : name) {
            if (!std::isalnum(static_cast<unsigned char>(c))) {
                throw std::invalid_argument("$select: '" + std::string(name) + "' is not a property name");
            }
        }
        out.emplace_back(name);
        at = comma + 1;
    }
    return out;
}

json select_fields(const json& doc, const std::vector<std::string>& fields) {
    json out = json::object();
    for (const std::string& name : fields) {
        if (auto it = doc.find(name); it != doc.end()) out[name] = *it;
    }
    return out;
}

}  // namespace bai::batch
