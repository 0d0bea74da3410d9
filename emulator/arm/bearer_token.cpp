#include "emulator/arm/bearer_token.h"

#include <cctype>
#include <string_view>

#include "common/text/ascii.h"
#include "emulator/arm/cloud_error.h"

namespace bai::arm {
namespace {

// RFC 7235 token68: letters, digits, "-._~+/", then "=" padding.
bool is_token68(std::string_view token) {
    size_t i = 0;
    while (i < token.size() && (std::isalnum(static_cast<unsigned char>(token[i])) ||
                                std::string_view("-._~+/").find(token[i]) != std::string_view::npos)) {
        ++i;
    }
    if (i == 0) return false;
    while (i < token.size() && token[i] == '=') ++i;
    return i == token.size();
}

[[noreturn]] void refuse(std::string code, std::string message, const std::string& description) {
    CloudError error(401, std::move(code), std::move(message));
    error.headers.emplace_back("WWW-Authenticate",
                               "Bearer authorization_uri=\"https://login.windows.net/\", error=\"invalid_token\", "
                               "error_description=\"" + description + "\"");
    throw error;
}

}  // namespace

void require_bearer_token(const httplib::Request& request) {
    // An empty header is no header (clients and proxies drop empty values either way).
    if (text::trim(request.get_header_value("Authorization")).empty()) {
        refuse("AuthenticationFailed", "Authentication failed. The 'Authorization' header is missing.",
               "The authentication failed because of missing 'Authorization' header.");
    }
    const std::string header = request.get_header_value("Authorization");
    std::string_view value = text::trim(header);
    size_t space = value.find(' ');
    std::string_view scheme = value.substr(0, space);
    std::string_view token = space == std::string_view::npos ? std::string_view() : text::trim(value.substr(space + 1));
    if (!text::iequals(scheme, "Bearer") || token.empty()) {
        refuse("AuthenticationFailed", "Authentication failed. The 'Authorization' header is provided in an invalid format.",
               "The authentication failed because of invalid 'Authorization' header format.");
    }
    if (!is_token68(token)) {
        refuse("InvalidAuthenticationToken", "The access token is invalid.", "The access token is invalid.");
    }
}

}  // namespace bai::arm
