// Reading the request headers the storage services share, and writing the response headers and
// error bodies they share.
#pragma once

#include <httplib.h>

#include <cstdint>
#include <optional>
#include <string>

#include "fake_storage/engine/conditions.h"
#include "fake_storage/engine/properties.h"
#include "fake_storage/engine/storage_error.h"
#include "fake_storage/http/storage_request.h"

namespace bai::storage {

// x-ms-meta-NAME headers. Throws 400 InvalidMetadata for a name that is not an identifier.
Metadata read_metadata(const StorageRequest& request);
void write_metadata(httplib::Response& response, const Metadata& metadata);
// <Metadata><Name>value</Name>...</Metadata>
std::string metadata_xml(const Metadata& metadata);

// If-Match, If-None-Match, If-Modified-Since, If-Unmodified-Since (400 InvalidHeaderValue for a
// date that does not parse).
Conditions read_conditions(const StorageRequest& request);
// A copy's conditions on its source: x-ms-source-if-match, -if-none-match, -if-modified-since,
// -if-unmodified-since and -if-tags, in Conditions' fields.
Conditions read_source_conditions(const StorageRequest& request);

struct ByteRange {
    std::uint64_t first = 0;
    std::optional<std::uint64_t> last;  // inclusive; open-ended when absent
};
// x-ms-range, else Range: "bytes=A-B" or "bytes=A-". nullopt when neither is sent or Range is
// malformed; 400 InvalidHeaderValue for a malformed x-ms-range.
std::optional<ByteRange> read_range(const StorageRequest& request);
// The same for one header (x-ms-source-range of Put Block From URL).
std::optional<ByteRange> read_range_header(const StorageRequest& request, const std::string& name);

// x-ms-version (else a SAS's sv): a date YYYY-MM-DD; 400 InvalidHeaderValue otherwise. Returns what
// to answer with, and what the answer's shape follows.
std::string read_version(const StorageRequest& request);

// x-ms-request-id, x-ms-version, Date, Server, x-ms-client-request-id.
void set_common_headers(const StorageRequest& request, httplib::Response& response,
                        const std::string& server, const std::string& version);
// Status, x-ms-error-code and the XML error body.
void write_error(const httplib::Request& http, httplib::Response& response,
                 const StorageError& error);

// An unsigned integer header; 400 InvalidHeaderValue when present and malformed.
std::optional<std::uint64_t> read_uint_header(const StorageRequest& request, const std::string& name);

[[noreturn]] void invalid_header(const std::string& name, const std::string& value);
// A request body that is not the XML document the operation takes: 400 InvalidXmlDocument; one
// whose element `element` holds a value out of its range: 400 InvalidXmlNodeValue naming it.
[[noreturn]] void invalid_xml_document(const std::string& detail);
[[noreturn]] void invalid_xml_node_value(const std::string& element, const std::string& value);
[[noreturn]] void missing_header(const std::string& name);
[[noreturn]] void invalid_query(const std::string& name, const std::string& value);

}  // namespace bai::storage
