#include "emulator/arm/bearer_token.h"

#include <cctype>
#include <chrono>
#include <cstdio>
#include <ctime>
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

[[noreturn]] void refuse_token(std::string code, std::string message, const std::string& description) {
    CloudError error(401, std::move(code), std::move(message));
    error.headers.emplace_back("WWW-Authenticate",
                               "Bearer authorization_uri=\"https://login.windows.net/\", error=\"invalid_token\", "
                               "error_description=\"" + description + "\"");
    throw error;
}

}  // namespace

std::string require_bearer_token(const httplib::Request& request) {
    // An empty header is no header (clients and proxies drop empty values either way).
    if (text::trim(request.get_header_value("Authorization")).empty()) {
        refuse_token("AuthenticationFailed", "Authentication failed. The 'Authorization' header is missing.",
                     "The authentication failed because of missing 'Authorization' header.");
    }
    const std::string header = request.get_header_value("Authorization");
    std::string_view value = text::trim(header);
    size_t space = value.find(' ');
    std::string_view scheme = value.substr(0, space);
    std::string_view token = space == std::string_view::npos ? std::string_view() : text::trim(value.substr(space + 1));
    if (!text::iequals(scheme, "Bearer") || token.empty()) {
        refuse_token("AuthenticationFailed",
                     "Authentication failed. The 'Authorization' header is provided in an invalid format.",
                     "The authentication failed because of invalid 'Authorization' header format.");
    }
    if (!is_token68(token)) {
        refuse_token("InvalidAuthenticationToken", "The access token is invalid.", "The access token is invalid.");
    }
    return std::string(token);
}

namespace {

// ARM's way of writing a UTC time in its messages: 11/26/2026 5:04:09 PM.
std::string arm_message_time(std::chrono::system_clock::time_point t) {
    const std::time_t seconds = std::chrono::system_clock::to_time_t(t);
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    const int hour = utc.tm_hour % 12 == 0 ? 12 : utc.tm_hour % 12;
    char out[64];
    std::snprintf(out, sizeof out, "%d/%d/%d %d:%02d:%02d %s", utc.tm_mon + 1, utc.tm_mday, utc.tm_year + 1900, hour,
                  utc.tm_min, utc.tm_sec, utc.tm_hour < 12 ? "AM" : "PM");
    return out;
}

}  // namespace

void check_arm_token(const identity::TokenService& tokens, const std::string& token) {
    static const std::vector<std::string> kAudiences = {"https://management.core.windows.net/",
                                                         "https://management.core.windows.net",
                                                         "https://management.azure.com/", "https://management.azure.com"};
    const identity::TokenVerdict verdict = tokens.verify(token, kAudiences);
    switch (verdict.check) {
        case identity::TokenCheck::valid:
            return;
        case identity::TokenCheck::expired: {
            const auto expiry = std::chrono::system_clock::time_point(std::chrono::seconds(verdict.claims.value("exp", 0L)));
            refuse_token("ExpiredAuthenticationToken",
                         "The access token expiry UTC time '" + arm_message_time(expiry) +
                             "' is earlier than current UTC time '" + arm_message_time(std::chrono::system_clock::now()) + "'.",
                         "The access token has expired.");
        }
        case identity::TokenCheck::wrong_audience:
            refuse_token("InvalidAuthenticationTokenAudience",
                         "The access token has been obtained for wrong audience or resource '" +
                             verdict.claims.value("aud", std::string()) +
                             "'. It should exactly match with one of the allowed audiences "
                             "'https://management.core.windows.net/','https://management.core.windows.net',"
                             "'https://management.azure.com/','https://management.azure.com'.",
                         "The access token has been obtained from wrong audience or resource.");
        case identity::TokenCheck::invalid:
            break;
    }
    refuse_token("InvalidAuthenticationToken", "The access token is invalid.", "The access token is invalid.");
}

}  // namespace bai::arm
