// Comparing cpp-jwt's error codes safely. Its error categories are objects with internal linkage,
// one per translation unit, and std::error_code compares categories by address: a code set inside
// a decode() instantiated in one file does not compare equal to the same enum in another. Compare
// by category name and value instead.
#pragma once

#include <jwt/jwt.hpp>
#include <string_view>
#include <system_error>

namespace bai::identity {

template <typename Errc>
bool jwt_error_is(const std::error_code& ec, Errc expected) {
    const std::error_code wanted = make_error_code(expected);
    return ec.value() == wanted.value() &&
           std::string_view(ec.category().name()) == wanted.category().name();
}

}  // namespace bai::identity
