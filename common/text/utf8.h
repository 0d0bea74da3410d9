// Whether bytes are well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF).
#pragma once

#include <string_view>

namespace bai::text {

bool is_valid_utf8(std::string_view text);

}  // namespace bai::text
