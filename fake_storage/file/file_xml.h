// The XML documents of the File service: share listings, directory listings, range lists.
#pragma once

#include <string>

#include "fake_storage/engine/file_store.h"

namespace bai::storage {

// What a share listing holds besides names, by what was asked and by x-ms-version: a share's
// properties grew with the versions.
struct ListSharesShape {
    bool metadata = false;  // include=metadata
    bool tiers = true;      // 2019-12-12: AccessTier and its change time, the encryption scope
    bool leases = true;     // 2020-02-10: LeaseStatus, LeaseState and LeaseDuration
    time::TimePoint now{};  // when the leases are reported
    int retention_days = 7;  // the account's ShareDeleteRetentionPolicy: a deleted share's RemainingRetentionDays
};

std::string list_shares_xml(const std::string& service_endpoint, const ListOptions& options,
                            const SharePage& page, const ListSharesShape& shape);
// extended: each entry's FileId, SMB times, Attributes and PermissionKey and the DirectoryId
// (2020-04-08); before, a name and a file's Content-Length. `snapshot`: the share snapshot listed
// ("" for the share).
std::string list_directory_xml(const std::string& service_endpoint, const std::string& share, const std::string& snapshot,
                               const std::string& directory_path, const ListOptions& options,
                               const DirectoryPage& page, bool extended);
// Get Ranges' answer: Range elements, and ClearRange for the cleared parts of a diff
// (prevsharesnapshot), in the order of the file.
std::string ranges_xml(const std::vector<FileRanges::Listed>& ranges);

}  // namespace bai::storage
