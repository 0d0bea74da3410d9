// One word for a POSIX shell, whatever it contains: 'text', each ' written '\''.
#pragma once

#include <string>
#include <string_view>

namespace bai::text {

std::string shell_quote(std::string_view text);

}  // namespace bai::text
