// Reading fields of JSON that came from a file or a server without trusting its shape: a wrong
// type reads as absent instead of throwing nlohmann's type_error.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace bai::cli {

inline std::string string_field(const nlohmann::json& o, const char* key, const std::string& fallback = "") {
    return o.is_object() && o.contains(key) && o[key].is_string() ? o[key].get<std::string>() : fallback;
}

inline std::optional<long long> integer_field(const nlohmann::json& o, const char* key) {
    if (!o.is_object() || !o.contains(key) || !o[key].is_number_integer()) return std::nullopt;
    return o[key].get<long long>();
}

inline const nlohmann::json& object_field(const nlohmann::json& o, const char* key) {
    static const nlohmann::json empty = nlohmann::json::object();
    return o.is_object() && o.contains(key) && o[key].is_object() ? o[key] : empty;
}

}  // namespace bai::cli
