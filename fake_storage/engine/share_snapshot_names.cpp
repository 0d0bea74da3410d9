#include "fake_storage/engine/share_snapshot_names.h"

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

}  // namespace bai::storage
