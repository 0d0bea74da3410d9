#include "emulator/arm/arm_request.h"

#include <charconv>

#include "emulator/arm/cloud_error.h"
#include "emulator/arm/text.h"

namespace bai::arm {

std::optional<std::string> ArmRequest::query(std::string_view name) const {
    for (const auto& [key, value] : http.params) {
        if (iequals(key, name)) return value;
    }
    return std::nullopt;
}

int ArmRequest::int_query(std::string_view name, int fallback, int low, int high) const {
    std::optional<std::string> text = query(name);
    if (!text) return fallback;
    int value = 0;
    auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
    if (ec != std::errc() || end != text->data() + text->size() || value < low || value > high) {
        throw bad_request("InvalidQueryParameterValue",
                          std::string(name) + " must be an integer from " + std::to_string(low) + " to " +
                              std::to_string(high) + ", not '" + *text + "'",
                          std::string(name));
    }
    return value;
}

std::optional<nlohmann::json> ArmRequest::json_body() const {
    const std::string& body = http.body;
    bool blank = body.find_first_not_of(" \t\r\n") == std::string::npos;
    if (blank) return std::nullopt;
    if (body.size() > kMaxBodyBytes) {
        throw bad_request("RequestEntityTooLarge",
                          "The request body is " + std::to_string(body.size()) +
                              " bytes; at most " + std::to_string(kMaxBodyBytes) + " are accepted.");
    }
    std::string type = http.get_header_value("Content-Type");
    std::string media = lower(trim(type.substr(0, type.find(';'))));
    if (!media.empty() && media != "application/json" && media != "text/json") {
        throw bad_request("UnsupportedMediaType", "The content media type '" + type +
                                                      "' is not supported. Only 'application/json' is supported.");
    }
    if (nests_deeper_than(body, kMaxJsonDepth)) {
        throw bad_request("InvalidRequestContent", "The request content nests objects and arrays deeper than " +
                                                       std::to_string(kMaxJsonDepth) + " levels.");
    }
    nlohmann::json parsed;
    try {
        parsed = nlohmann::json::parse(body);
    } catch (const nlohmann::json::parse_error& e) {
        throw bad_request("InvalidRequestContent",
                          "The request content was invalid and could not be deserialized: byte " +
                              std::to_string(e.byte) + ": " + e.what());
    } catch (const nlohmann::json::exception& e) {  // a number out of range, for one
        throw bad_request("InvalidRequestContent",
                          std::string("The request content was invalid and could not be deserialized: ") + e.what());
    }
    if (!parsed.is_object()) {
        throw bad_request("InvalidRequestContent", "The request content must be a JSON object.");
    }
    return parsed;
}

ArmRequest make_request(const httplib::Request& http, std::string_view fallback_base_url) {
    ArmRequest request{http, split_path(http.path), {}};
    std::string host = http.get_header_value("Host");
    request.base_url = host.empty() || host.find_first_of("/ \\@") != std::string::npos
                           ? std::string(fallback_base_url)
                           : "https://" + host;
    return request;
}

bool nests_deeper_than(std::string_view text, int limit) {
    int depth = 0;
    bool in_string = false;
    bool escaped = false;
    for (char c : text) {
        if (in_string) {
            if (escaped) {
                escaped = false;
            } else if (c == '\\') {
                escaped = true;
            } else if (c == '"') {
                in_string = false;
            }
            continue;
        }
        if (c == '"') {
            in_string = true;
        } else if (c == '{' || c == '[') {
            if (++depth > limit) return true;
        } else if (c == '}' || c == ']') {
            --depth;
        }
    }
    return false;
}

}  // namespace bai::arm
