// The lease operations' request headers and answers, which Lease Blob, Lease Container and
// Lease Share share.
#pragma once

#include <httplib.h>

#include <optional>
#include <string>
#include <string_view>

#include "fake_storage/engine/lease.h"
#include "fake_storage/http/storage_request.h"

namespace bai::storage {

// A lease id as the service takes it: a GUID in one of .NET's forms (32 hex digits, plain, with
// hyphens 8-4-4-4-12, or that in braces or parentheses).
bool is_lease_id(std::string_view value);
// The header `name` (x-ms-lease-id and its kin) when sent: 400 InvalidHeaderValue when it is not
// a lease id.
std::optional<std::string> read_lease_id(const StorageRequest& request, const char* name);

// x-ms-lease-action and the headers it takes: 400 MissingRequiredHeader / InvalidHeaderValue (a
// lease id or proposed id that is not a GUID too).
LeaseRequest lease_request(const StorageRequest& request);

// The status, ETag and Last-Modified, and x-ms-lease-id (or x-ms-lease-time for a break).
void write_lease_outcome(httplib::Response& response, const LeaseOutcome& outcome, const std::string& etag,
                         time::TimePoint modified);

// x-ms-lease-status, -state and, while leased, -duration.
void write_lease_headers(httplib::Response& response, const Lease& lease, time::TimePoint now);

}  // namespace bai::storage
