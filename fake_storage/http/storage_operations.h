// Pieces that the Blob and File operations share: listing parameters, version headers,
// transactional MD5, the endpoint URL in listings.
#pragma once

#include <httplib.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>

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
// The transactional checksums of a streamed body (Put Blob, Put Block, Append Block, Put Page):
// Content-MD5 or x-ms-content-crc64, not both (400 BothCrc64AndMd5HeaderPresent); a CRC64 must
// be 8 bytes in base64 (400 InvalidHeaderValue) and match (400 Crc64Mismatch). Answers with
// x-ms-content-crc64 (the body's, as the service computes it whether or not one was sent), and
// Content-MD5 when one was. The writer must have been begun with both digests.
void check_transactional_checksums(const StorageRequest& request, ContentWriter& body, httplib::Response& response);
// A CRC64 header (x-ms-content-crc64, x-ms-source-content-crc64), when sent, must be 8 bytes in
// base64 (400 InvalidHeaderValue) and equal `crc64` (400 Crc64Mismatch, both values named).
void check_crc64_header(const StorageRequest& request, const std::string& header, const std::string& crc64);
// x-ms-source-content-md5, when sent, must be 16 bytes in base64 (400 InvalidHeaderValue) and
// equal the source's MD5, which `digest` computes only then (400 Md5Mismatch).
void check_source_md5(const StorageRequest& request, const std::function<std::string()>& digest);

// Put Block's and Put Block From URL's blockid (400 MissingRequiredQueryParameter without one).
std::string block_id_param(const StorageRequest& request);
// Put Page's range, [first, end): x-ms-range, else Range, with both ends (400
// MissingRequiredHeader without one; 416 InvalidPageRange when an end is missing or they cross).
std::pair<std::uint64_t, std::uint64_t> read_page_range(const StorageRequest& request);
// Append Block's x-ms-blob-condition-maxsize and -appendpos.
AppendConditions read_append_conditions(const StorageRequest& request);
// Put Page's x-ms-if-sequence-number-le, -lt and -eq (each at most INT64_MAX).
SequenceConditions read_sequence_conditions(const StorageRequest& request);

}  // namespace bai::storage
