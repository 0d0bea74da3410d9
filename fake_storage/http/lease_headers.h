// The lease operations' request headers and answers, which Lease Blob, Lease Container and
// Lease Share share.
#pragma once

#include <httplib.h>

#include "fake_storage/engine/lease.h"
#include "fake_storage/http/storage_request.h"

namespace bai::storage {

// x-ms-lease-action and the headers it takes: 400 MissingRequiredHeader / InvalidHeaderValue.
LeaseRequest lease_request(const StorageRequest& request);

// The status, ETag and Last-Modified, and x-ms-lease-id (or x-ms-lease-time for a break).
void write_lease_outcome(httplib::Response& response, const LeaseOutcome& outcome, const std::string& etag,
                         time::TimePoint modified);

// x-ms-lease-status, -state and, while leased, -duration.
void write_lease_headers(httplib::Response& response, const Lease& lease, time::TimePoint now);

}  // namespace bai::storage
