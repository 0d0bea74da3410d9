// A string member of a JSON document that may not be an object or may not have it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace bai::text {

// The member `name` of `doc` when doc is an object and the member a string; else "".
inline std::string string_member(const nlohmann::json& doc, const char* name) {
    if (!doc.is_object()) return "";
    auto it = doc.find(name);
    return it != doc.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace bai::text
