// The names of share snapshots: the `sharesnapshot` value a client sends, and the key under
// which the store keeps a snapshot as a share of its own ("SHARE/TIME": no share name has a '/').
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/time/timestamps.h"

namespace bai::storage {

// A snapshot's name as the service writes it: "2020-01-15T23:54:16.0000000Z".
std::string share_snapshot_name(time::TimePoint t);
// The time a `sharesnapshot` value names, written as share_snapshot_name writes it: an ISO 8601
// UTC time ("2020-01-15T23:54:16Z", with up to 7 digits of fraction, or a +hh:mm offset). nullopt
// for anything else (the service's 400 InvalidQueryParameterValue).
std::optional<std::string> parse_share_snapshot(std::string_view value);

std::string share_snapshot_key(const std::string& share, const std::string& snapshot);
bool is_share_snapshot_key(std::string_view name);
// The share and the snapshot of a key; the share itself and "" for a share's own name.
std::pair<std::string, std::string> split_share_snapshot_key(const std::string& name);

}  // namespace bai::storage
