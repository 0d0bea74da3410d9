// Percent-encoding for URLs: everything but unreserved characters (RFC 3986), and '/' too when
// `keep_slash` (a path).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace bai::text {

std::string percent_encode(std::string_view text, bool keep_slash = false);
// The text a percent-encoded one stands for ('+' a space when `plus_is_space`, as in a query);
// nullopt for a malformed escape.
std::optional<std::string> percent_decode(std::string_view text, bool plus_is_space);

}  // namespace bai::text
