// Percent-encoding for URLs: everything but unreserved characters (RFC 3986), and '/' too when
// `keep_slash` (a path).
#pragma once

#include <string>
#include <string_view>

namespace bai::text {

std::string percent_encode(std::string_view text, bool keep_slash = false);

}  // namespace bai::text
