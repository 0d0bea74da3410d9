#include "fake_storage/engine/share_snapshot_names.h"

#include <cstdio>

namespace bai::storage {

std::string share_snapshot_name(time::TimePoint t) { return time::format_iso8601(t, 7); }

std::optional<std::string> parse_share_snapshot(std::string_view value) {
    // A date alone is not a snapshot's name: a time of day is required.
    if (value.size() < 17 || value.size() > 40 || value[10] != 'T') return std::nullopt;
    // Digits where the fields are (the parser's number reading would take a sign).
    for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15}) {
        if (value[i] < '0' || value[i] > '9') return std::nullopt;
    }
    if (value[16] == ':' && (value.size() < 19 || value[17] < '0' || value[17] > '9' || value[18] < '0' || value[18] > '9')) {
        return std::nullopt;
    }
    auto t = time::parse_iso8601(value);
    if (!t) return std::nullopt;
    return share_snapshot_name(*t);
}

std::string share_snapshot_key(const std::string& share, const std::string& snapshot) {
    return share + "/" + snapshot;
}

bool is_share_snapshot_key(std::string_view name) { return name.find('/') != std::string_view::npos; }

std::pair<std::string, std::string> split_share_snapshot_key(const std::string& name) {
    const size_t slash = name.find('/');
    if (slash == std::string::npos) return {name, ""};
    return {name.substr(0, slash), name.substr(slash + 1)};
}

namespace {
// 100 ns ticks from 1601-01-01 (FILETIME's epoch) to 1970-01-01 (the store's).
constexpr std::int64_t kFiletimeToUnix = 116444736000000000LL;
}  // namespace

std::string deleted_share_version(time::TimePoint deleted) {
    char text[17];
    std::snprintf(text, sizeof text, "%016llX",
                  static_cast<unsigned long long>(time::to_ticks(deleted) + kFiletimeToUnix));
    return text;
}

std::optional<time::TimePoint> deleted_share_time(std::string_view version) {
    if (version.size() != 16) return std::nullopt;
    std::uint64_t ticks = 0;
    for (char c : version) {
        int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (digit < 0) return std::nullopt;
        ticks = ticks * 16 + static_cast<std::uint64_t>(digit);
    }
    if (ticks < static_cast<std::uint64_t>(kFiletimeToUnix) || ticks > static_cast<std::uint64_t>(INT64_MAX)) return std::nullopt;
    return time::from_ticks(static_cast<std::int64_t>(ticks) - kFiletimeToUnix);
}

std::string deleted_share_key(const std::string& share, const std::string& version) { return share + "~" + version; }

std::pair<std::string, std::string> split_deleted_share_key(const std::string& key) {
    const std::string base = split_share_snapshot_key(key).first;
    const size_t tilde = base.find('~');
    if (tilde == std::string::npos) return {base, ""};
    return {base.substr(0, tilde), base.substr(tilde + 1)};
}

}  // namespace bai::storage
