#include "emulator/batch/body_properties.h"

#include "emulator/batch/batch_error.h"

namespace bai::batch {

using nlohmann::json;

namespace {

const json& definitions() {
    static const json parsed = json::parse(kBatchDefinitions);
    return parsed;
}

// A schema with its $ref followed (a reference the table lacks: null).
const json* resolved(const json& schema) {
    const json* at = &schema;
    for (int depth = 0; depth < 16 && at->is_object() && at->contains("$ref"); ++depth) {
        const std::string ref = (*at)["$ref"].get<std::string>();
        const std::string name = ref.substr(ref.rfind('/') + 1);
        if (!definitions().contains(name)) return nullptr;
        at = &definitions()[name];
    }
    return at;
}

// The properties a schema has, its allOf parents' too; false when it takes any (no properties
// listed, or additionalProperties).
bool collect(const json& schema, std::vector<const json*>& property_sets, int depth = 0) {
    const json* s = resolved(schema);
    if (!s || depth > 8 || s->contains("additionalProperties")) return false;
    bool listed = false;
    if (s->contains("properties")) {
        property_sets.push_back(&(*s)["properties"]);
        listed = true;
    }
    for (const json& parent : s->value("allOf", json::array())) {
        if (!collect(parent, property_sets, depth + 1)) return false;
        listed = true;
    }
    return listed;
}

std::optional<std::string> check(const json& value, const json& schema, const std::string& path, int depth) {
    if (depth > 32) return std::nullopt;
    const json* s = resolved(schema);
    if (!s) return std::nullopt;
    if (value.is_array()) {
        if (!s->contains("items")) return std::nullopt;
        for (size_t i = 0; i < value.size(); ++i) {
            if (auto found = check(value[i], (*s)["items"], path + "[" + std::to_string(i) + "]", depth + 1)) return found;
        }
        return std::nullopt;
    }
    if (!value.is_object()) return std::nullopt;
    std::vector<const json*> property_sets;
    if (!collect(*s, property_sets)) return std::nullopt;
    for (const auto& [name, member] : value.items()) {
        const json* property = nullptr;
        for (const json* set : property_sets) {
            if (set->contains(name)) property = &(*set)[name];
        }
        const std::string at = path.empty() ? name : path + "." + name;
        if (!property) return at;
        if (auto found = check(member, *property, at, depth + 1)) return found;
    }
    return std::nullopt;
}

}  // namespace

std::optional<std::string> unknown_property(const json& body, const std::string& definition) {
    if (!definitions().contains(definition)) return std::nullopt;
    return check(body, definitions()[definition], "", 0);
}

void refuse_unknown_properties(const json& body, const std::string& definition) {
    std::optional<std::string> unknown = unknown_property(body, definition);
    if (!unknown) return;
    const std::string name = unknown->substr(unknown->find_last_of('.') == std::string::npos ? 0 : unknown->find_last_of('.') + 1);
    throw BatchError(400, "InvalidRequestBody", "The specified Request Body is not syntactically valid.",
                     {{"PropertyName", *unknown},
                      {"Reason", "The property '" + name + "' does not exist on type '" + definition +
                                     "'. Make sure to only use property names that are defined by the type."}});
}

}  // namespace bai::batch
