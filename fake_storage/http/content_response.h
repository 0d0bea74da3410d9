// Answering with bytes of a blob or a file: the requested range, and the body (small ones in
// one piece, larger ones streamed from the open descriptor).
#pragma once

#include <httplib.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

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

}  // namespace bai::storage
