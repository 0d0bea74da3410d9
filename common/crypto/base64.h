#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace bai::crypto {

std::string base64_encode(std::string_view bytes);
// Strict standard base64 (with padding); nullopt for anything else.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace bai::crypto
