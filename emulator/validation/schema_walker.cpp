#include "emulator/validation/schema_walker.h"

#include <strings.h>

#include <cmath>
#include <limits>

#include "common/time/timestamps.h"
#include "emulator/validation/duration.h"

namespace bai::validation {
namespace {

std::string describe(const nlohmann::json& value) {
    std::string text = value.dump();
    return text.size() > 60 ? text.substr(0, 57) + "..." : text;
}

std::string type_name(const nlohmann::json& v) {
    if (v.is_object()) return "an object";
    if (v.is_array()) return "an array";
    if (v.is_string()) return "a string";
    if (v.is_boolean()) return "a boolean";
    if (v.is_null()) return "null";
    return "a number";
}

bool is_integral(const nlohmann::json& v) {
    if (v.is_number_integer() || v.is_number_unsigned()) return true;
    if (!v.is_number_float()) return false;
    double d = v.get<double>();
    return std::isfinite(d) && std::floor(d) == d;
}

}  // namespace

std::string join_path(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
}

SchemaWalker::SchemaWalker(const nlohmann::json& definitions, Report& report,
                           std::function<bool(const std::string&)> may_be_missing)
    : definitions_(definitions), report_(report), may_be_missing_(std::move(may_be_missing)) {}

void SchemaWalker::error(const std::string& path, const std::string& message) {
    report_.errors.push_back({path.empty() ? "$" : path, message});
}

void SchemaWalker::warning(const std::string& path, const std::string& message) {
    report_.warnings.push_back({path.empty() ? "$" : path, message});
}

const nlohmann::json& SchemaWalker::resolve(const nlohmann::json& schema) const {
    const nlohmann::json* current = &schema;
    for (int depth = 0; depth < 16 && current->contains("$ref"); ++depth) {
        const std::string ref = (*current)["$ref"].get<std::string>();
        const std::string prefix = "#/definitions/";
        current = &definitions_.at(ref.substr(prefix.size()));
    }
    return *current;
}

void SchemaWalker::walk_definition(const nlohmann::json& value, const std::string& definition,
                                   const std::string& path) {
    walk(value, definitions_.at(definition), path, path);
}

void SchemaWalker::walk(const nlohmann::json& value, const nlohmann::json& schema_in,
                        const std::string& path, const std::string& generic_path) {
    // The service's deserializer reads null as absent.
    if (value.is_null()) return;
    const nlohmann::json& schema = resolve(schema_in);
    std::string type = schema.value("type", "");
    if (type.empty() && (schema.contains("properties") || schema.contains("allOf"))) type = "object";

    if (type == "object") {
        if (!value.is_object()) return error(path, "must be an object, not " + type_name(value));
        return walk_object(value, schema, path, generic_path);
    }
    if (type == "array") {
        if (!value.is_array()) return error(path, "must be an array, not " + type_name(value));
        if (!schema.contains("items")) return;
        for (size_t i = 0; i < value.size(); ++i) {
            walk(value[i], schema["items"], path + "[" + std::to_string(i) + "]", generic_path + "[]");
        }
        return;
    }
    if (type == "integer") {
        if (!is_integral(value)) return error(path, "must be an integer, not " + describe(value));
        if (schema.value("format", "") == "int32") {
            double d = value.get<double>();
            if (d < std::numeric_limits<int32_t>::min() || d > std::numeric_limits<int32_t>::max()) {
                error(path, "is out of the 32-bit integer range: " + describe(value));
            }
        }
        return;
    }
    if (type == "number") {
        if (!value.is_number()) error(path, "must be a number, not " + describe(value));
        return;
    }
    if (type == "boolean") {
        if (!value.is_boolean()) error(path, "must be true or false, not " + describe(value));
        return;
    }
    if (type == "string" || schema.contains("enum")) {
        if (!value.is_string()) return error(path, "must be a string, not " + type_name(value));
        const std::string text = value.get<std::string>();
        if (schema.contains("enum")) {
            bool known = false;
            std::string allowed;
            for (const auto& option : schema["enum"]) {
                std::string o = option.get<std::string>();
                known = known || strcasecmp(o.c_str(), text.c_str()) == 0;
                allowed += (allowed.empty() ? "" : ", ") + o;
            }
            if (!known) error(path, "must be one of " + allowed + ", not \"" + text + "\"");
        }
        std::string format = schema.value("format", "");
        if (format == "duration" && !parse_duration(text)) {
            error(path, "is not a duration (ISO 8601 such as \"P7D\" or \"PT1H\", or d.hh:mm:ss): \"" +
                            text + "\"");
        }
        if (format == "date-time" && !time::parse_iso8601(text)) {
            error(path, "is not an ISO 8601 date-time: \"" + text + "\"");
        }
    }
}

void SchemaWalker::walk_object(const nlohmann::json& value, const nlohmann::json& schema,
                               const std::string& path, const std::string& generic_path) {
    // The properties and required lists of the schema and of everything it inherits (allOf).
    nlohmann::json properties = nlohmann::json::object();
    std::vector<std::string> required;
    std::function<void(const nlohmann::json&)> collect = [&](const nlohmann::json& s_in) {
        const nlohmann::json& s = resolve(s_in);
        if (s.contains("allOf")) {
            for (const auto& parent : s["allOf"]) collect(parent);
        }
        if (s.contains("properties")) {
            for (const auto& [k, v] : s["properties"].items()) properties[k] = v;
        }
        if (s.contains("required")) {
            for (const auto& r : s["required"]) required.push_back(r.get<std::string>());
        }
    };
    collect(schema);

    for (const std::string& name : required) {
        if (value.contains(name) && !value[name].is_null()) continue;
        std::string child = join_path(generic_path, name);
        if (may_be_missing_ && may_be_missing_(child)) continue;
        error(join_path(path, name), "is required");
    }
    const nlohmann::json* extra = schema.contains("additionalProperties") &&
                                          schema["additionalProperties"].is_object()
                                      ? &schema["additionalProperties"]
                                      : nullptr;
    for (const auto& [key, child] : value.items()) {
        std::string child_path = join_path(path, key);
        if (properties.contains(key)) {
            const nlohmann::json& property = properties[key];
            if (property.value("readOnly", false) || resolve(property).value("readOnly", false)) {
                warning(child_path, "is read-only: the service ignores it in a request");
                continue;
            }
            walk(child, property, child_path, join_path(generic_path, key));
        } else if (extra != nullptr) {
            walk(child, *extra, child_path, join_path(generic_path, key));
        } else if (key != "$schema") {
            warning(child_path, "is not a property the service knows (a typo?); it is ignored");
        }
    }
}

}  // namespace bai::validation
