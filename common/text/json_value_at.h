// A document's value at a JSON pointer, or a fallback where it has none.
//
// nlohmann's json::value(pointer, fallback) finds a missing member by throwing and catching
// out_of_range inside: microseconds each, on paths taken for every job. This asks first.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace bai::text {

template <typename T>
T value_at(const nlohmann::json& doc, const nlohmann::json::json_pointer& pointer, T fallback) {
    if (!doc.contains(pointer)) return fallback;
    return doc.at(pointer).get<T>();
}

inline std::string value_at(const nlohmann::json& doc, const nlohmann::json::json_pointer& pointer, const char* fallback) {
    return value_at<std::string>(doc, pointer, fallback);
}

}  // namespace bai::text
