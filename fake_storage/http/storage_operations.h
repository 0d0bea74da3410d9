// Pieces that the Blob and File operations share: listing parameters, version headers,
// transactional MD5, the endpoint URL in listings.
#pragma once

#include <httplib.h>

#include <string>

#include "common/time/timestamps.h"
#include "fake_storage/engine/blob_store.h"
#include "fake_storage/http/storage_endpoint.h"

namespace bai::storage {

// "http://HOST/ACCOUNT", as listings name their ServiceEndpoint.
std::string service_endpoint(const StorageCall& call);
[[noreturn]] void unsupported(const StorageRequest& request);
// prefix, marker, maxresults (1..5000; 400 InvalidQueryParameterValue otherwise), delimiter.
ListOptions list_options(const StorageRequest& request);
// Whether include=a,b,c names `what` (case-insensitive).
bool includes(const StorageRequest& request, const std::string& what);
void set_version_headers(httplib::Response& response, const std::string& etag,
                         time::TimePoint modified);
// An MD5 header (the transactional Content-MD5 by default) must be 16 bytes in base64 (400
// InvalidMd5) and equal the digest of what arrived (400 Md5Mismatch).
void check_content_md5(const StorageRequest& request, const std::string& digest,
                       const std::string& header = "Content-MD5");

}  // namespace bai::storage
