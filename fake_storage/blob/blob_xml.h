// The XML documents of the Blob service: container and blob listings, block lists. `now`: the
// store's clock, which leases are read against.
#pragma once

#include <string>

#include "fake_storage/engine/blob_store.h"

namespace bai::storage {

// `retention_days`: the account's container retention, for a deleted container's remaining days.
std::string list_containers_xml(const std::string& service_endpoint, const ListOptions& options,
                                const ContainerListPage& page, bool include_metadata, time::TimePoint now,
                                int retention_days = 0);
// What List Blobs' include= asks for besides the properties.
struct BlobListIncludes {
    bool metadata = false;
    bool tags = false;
    bool copy = false;
    bool version_ids = false;  // VersionId and IsCurrentVersion (x-ms-version 2019-10-10 and later)
    bool or_metadata = false;  // object replication's OrMetadata, empty here (2019-12-12 and later)
    bool last_access_time = false;  // the account tracks it (2020-02-10 and later)
    int retention_days = 0;    // the account's delete retention, for a soft deleted blob's remaining days
};
// A blob's last access time where the account tracks it: the time of its last write. Reads are
// not tracked (the service updates the time on a read at most once a day; every recorded answer
// names the last write).
inline time::TimePoint last_access_time(const BlobInfo& b) { return b.last_modified; }

std::string list_blobs_xml(const std::string& service_endpoint, const std::string& container,
                           const ListOptions& options, const BlobListPage& page, const BlobListIncludes& include,
                           time::TimePoint now);
std::string block_list_xml(const BlockLists& lists, bool committed, bool uncommitted);

}  // namespace bai::storage
