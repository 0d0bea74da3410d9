// ASCII case folding and trimming, as HTTP header names, ARM names and Azure Storage
// canonicalisation compare and clean text.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace bai::text {

std::string lower(std::string_view text);
std::string upper(std::string_view text);
bool iequals(std::string_view a, std::string_view b);
// Without leading and trailing spaces and tabs.
std::string_view trim(std::string_view text);
// The items of a list such as "a, b,,c" (HTTP header lists, CORS rules): split at `separator`,
// trimmed, empty ones left out.
std::vector<std::string> split_list(std::string_view text, char separator = ',');

}  // namespace bai::text
