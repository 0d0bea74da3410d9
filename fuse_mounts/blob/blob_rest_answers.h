// What the Blob REST API answers, read for the blob filesystem over REST (blob_rest_container.h):
// a blob's properties from its headers, a page of List Blobs, an error's message. Answers come
// from the network: whatever they hold, these read what they can and never crash.
#pragma once

#include <httplib.h>

#include <string>

#include "fake_storage/engine/blob_store.h"

namespace bai::mounts {

// A header's RFC 1123 time (the zero time when absent or malformed).
time::TimePoint time_of(const httplib::Response& r, const char* header);
// A blob's properties as Get Blob Properties and Get Blob answer them.
storage::BlobInfo info_of(const std::string& container, const std::string& name, const httplib::Response& r);
// A List Blobs page (names, sizes, times, content types and metadata; "Encoded" names decoded).
// Throws storage::StorageError 502 InvalidXml when the body is no XML.
storage::BlobListPage parse_list_blobs(const std::string& xml, const std::string& container);
// The error's message: the body's <Message> (first line), else its x-ms-error-code and status.
std::string error_message(const httplib::Response& r);

}  // namespace bai::mounts
