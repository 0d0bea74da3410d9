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

// A soft-deleted share is kept under "SHARE~VERSION" (no share name has a '~'), its snapshots
// under "SHARE~VERSION/TIME". VERSION is what List Shares names it by and Undelete Share takes:
// the time of the deletion as 16 upper-case hex digits of a Windows FILETIME
// ("01D69C4E8E6FB05B"), as the service writes it.
std::string deleted_share_version(time::TimePoint deleted);
// The time a version names; nullopt for anything but 16 hex digits.
std::optional<time::TimePoint> deleted_share_time(std::string_view version);
std::string deleted_share_key(const std::string& share, const std::string& version);
// The share's name and the version of a deleted share's key (its snapshot part left out); the
// name and "" for any other key.
std::pair<std::string, std::string> split_deleted_share_key(const std::string& key);

}  // namespace bai::storage
