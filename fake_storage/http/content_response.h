// Answering with bytes of a blob or a file: the requested range, and the body (small ones in
// one piece, larger ones streamed from the open descriptor).
#pragma once

#include <httplib.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "fake_storage/engine/properties.h"
#include "fake_storage/http/storage_request.h"

namespace bai::storage {

struct ResolvedRange {
    std::uint64_t first = 0;
    std::uint64_t length = 0;
};

// The range the request asks for within `size` bytes: nullopt for the whole; sets 206 and
// Content-Range; 416 InvalidRange (with Content-Range: bytes */size) when it starts past the end.
std::optional<ResolvedRange> resolve_range(const StorageRequest& request, httplib::Response& response,
                                           std::uint64_t size);

// Sends `range` of the file open as `fd` (kept open until the response is written).
void send_content(httplib::Response& response, std::shared_ptr<const int> fd, ResolvedRange range,
                  const std::string& content_type);

// A blob's or a file's bytes: in memory (`bytes`) or behind `fd` (kept open until sent).
struct StoredContent {
    const ContentSettings& settings;
    std::uint64_t size;
    std::shared_ptr<const int> fd;
    const std::string* bytes = nullptr;
};

// Get Blob / Get File and their HEAD forms, after the resource's own headers: the content
// headers and Accept-Ranges; for HEAD the type, length and Content-MD5; for GET the requested
// range, with the whole content's MD5 in Content-MD5, or in `range_md5_header` when only a
// range is sent (x-ms-blob-content-md5 for blobs, x-ms-content-md5 for files).
void answer_with_content(const StorageRequest& request, httplib::Response& response,
                         const StoredContent& content, const char* range_md5_header);

}  // namespace bai::storage
