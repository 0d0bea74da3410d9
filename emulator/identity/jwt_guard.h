// cpp-jwt's two pitfalls, guarded once for every caller.
//  - Its base64 decoder indexes a 256-entry table with a plain (signed) char: a byte over 0x7f
//    reads before the table (an assertion in debug builds, a wild read in release ones). Only
//    text that is base64url through and through may reach it: is_compact_jwt() for a whole token,
//    is_base64url() for one field.
//  - Its error categories are objects with internal linkage, one per translation unit, and
//    std::error_code compares categories by address: a code set inside a decode() instantiated in
//    one file does not compare equal to the same enum in another. jwt_error_is() compares by
//    category name and value instead.
#pragma once

#include <jwt/jwt.hpp>
#include <string_view>
#include <system_error>

namespace bai::identity {

// Letters, digits, '-' and '_' only (and not empty).
inline bool is_base64url(std::string_view text) {
    if (text.empty()) return false;
    for (char c : text) {
        const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
        if (!ok) return false;
    }
    return true;
}

// HEADER.PAYLOAD.SIGNATURE, each base64url (the signature may be empty: cpp-jwt refuses an
// unsigned token itself).
inline bool is_compact_jwt(std::string_view token) {
    const size_t first = token.find('.');
    if (first == std::string_view::npos) return false;
    const size_t second = token.find('.', first + 1);
    if (second == std::string_view::npos || token.find('.', second + 1) != std::string_view::npos) return false;
    const std::string_view signature = token.substr(second + 1);
    return is_base64url(token.substr(0, first)) && is_base64url(token.substr(first + 1, second - first - 1)) &&
           (signature.empty() || is_base64url(signature));
}

template <typename Errc>
bool jwt_error_is(const std::error_code& ec, Errc expected) {
    const std::error_code wanted = make_error_code(expected);
    return ec.value() == wanted.value() && std::string_view(ec.category().name()) == wanted.category().name();
}

}  // namespace bai::identity
