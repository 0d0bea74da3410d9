// Checks a JSON value against a swagger schema: types, int32 ranges, enums (case-insensitive,
// as the service's deserializer was), durations, date-times, required properties, read-only and
// unknown properties (warnings).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "emulator/validation/validator.h"

namespace bai::validation {

class SchemaWalker {
public:
    // `may_be_missing(generic_path)` says whether a required property may be absent (CLI mode);
    // generic paths write array indexes as "[]".
    SchemaWalker(const nlohmann::json& definitions, Report& report,
                 std::function<bool(const std::string&)> may_be_missing);

    void walk(const nlohmann::json& value, const nlohmann::json& schema, const std::string& path,
              const std::string& generic_path);
    void walk_definition(const nlohmann::json& value, const std::string& definition,
                         const std::string& path);

private:
    const nlohmann::json& resolve(const nlohmann::json& schema) const;
    void walk_object(const nlohmann::json& value, const nlohmann::json& schema,
                     const std::string& path, const std::string& generic_path);
    void error(const std::string& path, const std::string& message);
    void warning(const std::string& path, const std::string& message);

    const nlohmann::json& definitions_;
    Report& report_;
    std::function<bool(const std::string&)> may_be_missing_;
};

// "a.b" + "c" -> "a.b.c"; "" + "c" -> "c".
std::string join_path(const std::string& path, const std::string& key);

}  // namespace bai::validation
