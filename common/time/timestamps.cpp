#include "common/time/timestamps.h"

#include <charconv>
#include <cstdio>
#include <cstring>
#include <ctime>

namespace bai::time {
namespace {

constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

// Whole seconds since the epoch (rounded down) and the nanoseconds after them, in integer
// arithmetic: std::chrono::floor would convert the seconds back to nanoseconds, which overflows
// for the earliest time a TimePoint holds (a date before 1678, clamped).
std::int64_t whole_seconds(TimePoint t, long& nanos) {
    const std::int64_t count = t.time_since_epoch().count();
    std::int64_t secs = count / 1'000'000'000;
    std::int64_t rest = count % 1'000'000'000;
    if (rest < 0) {
        rest += 1'000'000'000;
        secs -= 1;
    }
    nanos = static_cast<long>(rest);
    return secs;
}

std::tm utc_fields(TimePoint t, long& nanos) {
    std::time_t tt = static_cast<std::time_t>(whole_seconds(t, nanos));
    std::tm fields{};
    gmtime_r(&tt, &fields);
    return fields;
}

bool read_int(std::string_view text, size_t pos, size_t len, int& out) {
    if (pos + len > text.size()) return false;
    const char* begin = text.data() + pos;
    auto [end, ec] = std::from_chars(begin, begin + len, out);
    return ec == std::errc() && end == begin + len;
}

std::optional<TimePoint> make_time(int year, int month, int day, int hour, int minute, int second,
                                   long nanos, int offset_minutes) {
    if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) {
        return std::nullopt;
    }
    std::chrono::year_month_day ymd{std::chrono::year(year), std::chrono::month(month),
                                    std::chrono::day(day)};
    if (!ymd.ok()) return std::nullopt;
    // Nanoseconds since 1970 in 64 bits reach from 1677 to 2262: a date past either end (a SAS
    // that expires in 9999, say) is the end itself rather than a wrapped-around one.
    if (year > 2261) return TimePoint::max();
    if (year < 1678) return TimePoint::min();
    auto days = std::chrono::sys_days(ymd);
    TimePoint t = TimePoint(days.time_since_epoch()) + std::chrono::hours(hour) +
                  std::chrono::minutes(minute - offset_minutes) + std::chrono::seconds(second) +
                  std::chrono::nanoseconds(nanos);
    return t;
}

}  // namespace

TimePoint now() {
    // The resolution of stored timestamps, so that what is returned equals what is read back.
    return from_ticks(to_ticks(std::chrono::time_point_cast<std::chrono::nanoseconds>(Clock::now())));
}

std::string format_rfc1123(TimePoint t) {
    // Most calls format the current second again (Date, Last-Modified of fresh writes).
    thread_local std::int64_t cached_second = -1;
    thread_local std::string cached;
    long nanos = 0;
    std::int64_t second = whole_seconds(t, nanos);
    if (second == cached_second) return cached;
    std::tm f = utc_fields(t, nanos);
    // Written by hand: snprintf cost more than the rest of a small Get Blob's headers together.
    auto two = [](char* at, int value) {
        at[0] = static_cast<char>('0' + value / 10 % 10);
        at[1] = static_cast<char>('0' + value % 10);
    };
    char text[] = "Sun, 00 Jan 0000 00:00:00 GMT";
    std::memcpy(text, kDays[f.tm_wday], 3);
    two(text + 5, f.tm_mday);
    std::memcpy(text + 8, kMonths[f.tm_mon], 3);
    int year = f.tm_year + 1900;
    two(text + 12, year / 100);
    two(text + 14, year % 100);
    two(text + 17, f.tm_hour);
    two(text + 20, f.tm_min);
    two(text + 23, f.tm_sec);
    cached_second = second;
    cached.assign(text, sizeof text - 1);
    return cached;
}

std::optional<TimePoint> parse_rfc1123(std::string_view text) {
    // "Sun, 22 Nov 2026 04:15:00 GMT"
    if (text.size() != 29 || text[3] != ',' || text.substr(25) != " GMT") return std::nullopt;
    int day = 0, year = 0, hour = 0, minute = 0, second = 0;
    if (!read_int(text, 5, 2, day) || !read_int(text, 12, 4, year) || !read_int(text, 17, 2, hour) ||
        !read_int(text, 20, 2, minute) || !read_int(text, 23, 2, second)) {
        return std::nullopt;
    }
    std::string_view month_name = text.substr(8, 3);
    int month = 0;
    for (int i = 0; i < 12; ++i) {
        if (month_name == kMonths[i]) month = i + 1;
    }
    if (month == 0 || text[19] != ':' || text[22] != ':') return std::nullopt;
    return make_time(year, month, day, hour, minute, second, 0, 0);
}

std::string now_iso8601() { return format_iso8601(now()); }

std::string format_iso8601(TimePoint t, int fraction_digits) {
    long nanos = 0;
    std::tm f = utc_fields(t, nanos);
    char buffer[48];
    int n = std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02dT%02d:%02d:%02d", f.tm_year + 1900,
                          f.tm_mon + 1, f.tm_mday, f.tm_hour, f.tm_min, f.tm_sec);
    std::string out(buffer, static_cast<size_t>(n));
    if (fraction_digits > 0) {
        char digits[16];
        std::snprintf(digits, sizeof digits, "%09ld", nanos);
        out += '.';
        out.append(digits, static_cast<size_t>(std::min(fraction_digits, 9)));
    }
    out += 'Z';
    return out;
}

std::optional<TimePoint> parse_iso8601(std::string_view text) {
    int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
    if (!read_int(text, 0, 4, year) || text.size() < 10 || text[4] != '-' ||
        !read_int(text, 5, 2, month) || text[7] != '-' || !read_int(text, 8, 2, day)) {
        return std::nullopt;
    }
    if (text.size() == 10) return make_time(year, month, day, 0, 0, 0, 0, 0);
    if (text.size() < 16 || (text[10] != 'T' && text[10] != 't') || !read_int(text, 11, 2, hour) ||
        text[13] != ':' || !read_int(text, 14, 2, minute)) {
        return std::nullopt;
    }
    size_t pos = 16;
    long nanos = 0;
    if (pos < text.size() && text[pos] == ':') {
        if (!read_int(text, pos + 1, 2, second)) return std::nullopt;
        pos += 3;
        if (pos < text.size() && text[pos] == '.') {
            size_t start = ++pos;
            long scale = 100000000;
            while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
                if (scale > 0) nanos += (text[pos] - '0') * scale;
                scale /= 10;
                ++pos;
            }
            if (pos == start) return std::nullopt;
        }
    }
    int offset = 0;
    std::string_view zone = text.substr(pos);
    if (zone == "Z" || zone == "z") {
        offset = 0;
    } else if (zone.size() == 6 && (zone[0] == '+' || zone[0] == '-') && zone[3] == ':') {
        int oh = 0, om = 0;
        if (!read_int(zone, 1, 2, oh) || !read_int(zone, 4, 2, om)) return std::nullopt;
        offset = (oh * 60 + om) * (zone[0] == '-' ? -1 : 1);
    } else {
        return std::nullopt;
    }
    return make_time(year, month, day, hour, minute, second, nanos, offset);
}

std::int64_t to_ticks(TimePoint t) { return t.time_since_epoch().count() / 100; }

TimePoint from_ticks(std::int64_t ticks) { return TimePoint(std::chrono::nanoseconds(ticks * 100)); }

}  // namespace bai::time
