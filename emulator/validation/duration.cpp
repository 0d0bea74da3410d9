#include "emulator/validation/duration.h"

#include <cctype>
#include <charconv>

namespace bai::validation {
namespace {

// "P[nY][nM][nW][nD][T[nH][nM][n[.f]S]]"; years and months count as 365 and 30 days.
std::optional<std::chrono::seconds> parse_iso(std::string_view s) {
    if (s.size() < 2 || (s[0] != 'P' && s[0] != 'p')) return std::nullopt;
    double total = 0;
    bool in_time = false;
    bool any = false;
    size_t i = 1;
    while (i < s.size()) {
        if (s[i] == 'T' || s[i] == 't') {
            if (in_time) return std::nullopt;
            in_time = true;
            ++i;
            continue;
        }
        size_t start = i;
        while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
        if (i == start || i >= s.size()) return std::nullopt;
        double value = 0;
        auto [end, ec] = std::from_chars(s.data() + start, s.data() + i, value);
        if (ec != std::errc() || end != s.data() + i) return std::nullopt;
        char unit = static_cast<char>(std::toupper(static_cast<unsigned char>(s[i++])));
        double scale = 0;
        if (!in_time && unit == 'Y') scale = 365 * 86400.0;
        else if (!in_time && unit == 'M') scale = 30 * 86400.0;
        else if (!in_time && unit == 'W') scale = 7 * 86400.0;
        else if (!in_time && unit == 'D') scale = 86400.0;
        else if (in_time && unit == 'H') scale = 3600.0;
        else if (in_time && unit == 'M') scale = 60.0;
        else if (in_time && unit == 'S') scale = 1.0;
        else return std::nullopt;
        total += value * scale;
        any = true;
    }
    if (!any) return std::nullopt;
    return std::chrono::seconds(static_cast<long long>(total));
}

// "[d.]hh:mm[:ss[.fffffff]]"
std::optional<std::chrono::seconds> parse_dotnet(std::string_view s) {
    long long days = 0;
    size_t colon = s.find(':');
    if (colon == std::string_view::npos) return std::nullopt;
    size_t dot = s.find('.');
    size_t clock = 0;
    if (dot != std::string_view::npos && dot < colon) {
        auto [end, ec] = std::from_chars(s.data(), s.data() + dot, days);
        if (ec != std::errc() || end != s.data() + dot || days < 0) return std::nullopt;
        clock = dot + 1;
    }
    int parts[3] = {0, 0, 0};
    int count = 0;
    size_t i = clock;
    while (i <= s.size() && count < 3) {
        size_t next = s.find(':', i);
        std::string_view field = s.substr(i, next == std::string_view::npos ? std::string_view::npos : next - i);
        if (count == 2) field = field.substr(0, field.find('.'));  // fractions of a second
        auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), parts[count]);
        if (field.empty() || ec != std::errc() || end != field.data() + field.size()) return std::nullopt;
        ++count;
        if (next == std::string_view::npos) break;
        i = next + 1;
    }
    if (count < 2 || parts[0] > 23 || parts[1] > 59 || parts[2] > 59) return std::nullopt;
    return std::chrono::seconds(days * 86400 + parts[0] * 3600 + parts[1] * 60 + parts[2]);
}

}  // namespace

std::optional<std::chrono::seconds> parse_duration(std::string_view text) {
    if (text.empty()) return std::nullopt;
    if (text[0] == 'P' || text[0] == 'p') return parse_iso(text);
    return parse_dotnet(text);
}

}  // namespace bai::validation
