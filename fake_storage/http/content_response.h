// Answering with bytes of a blob or a file: the requested range, and the body (small ones in
// one piece, larger ones streamed from what the content is read from).
#pragma once

#include <httplib.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
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

// Reads up to `size` bytes of stored content from `offset` (fewer only at its end), as pread
// does; it keeps what it reads from open until the response is written.
using ContentReader = std::function<ssize_t(char* into, size_t size, std::uint64_t offset)>;

// Sends `range` of the content that `read` reads.
void send_content(httplib::Response& response, ContentReader read, ResolvedRange range,
                  const std::string& content_type);

// A blob's or a file's bytes: in memory (`bytes`) or read by `read`.
struct StoredContent {
    const ContentSettings& settings;
    std::uint64_t size;
    ContentReader read;
    const std::string* bytes = nullptr;
};

// Get Blob / Get File and their HEAD forms, after the resource's own headers: the content
// headers and Accept-Ranges; for HEAD the type, length and Content-MD5; for GET the requested
// range, with the whole content's MD5 in Content-MD5, or in `range_md5_header` when only a
// range is sent (x-ms-blob-content-md5 for blobs, which a blob also sends with the whole,
// x-ms-content-md5 for files); with x-ms-range-get-content-md5: true, a range's own MD5 in
// Content-MD5 (ranges of 4 MiB at most: 400 OutOfRangeInput).
void answer_with_content(const StorageRequest& request, httplib::Response& response,
                         const StoredContent& content, const char* range_md5_header);

}  // namespace bai::storage
