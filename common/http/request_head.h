// The head of an HTTP/1.1 request (request line and header fields) as the lean listener reads
// it, and the framing of its body (RFC 9112): parsed strictly, so that a malformed request is
// answered 400 instead of being guessed at.
#pragma once

#include <httplib.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace bai::http {

struct BodyFraming {
    bool chunked = false;
    std::uint64_t length = 0;  // when not chunked
    bool expects_continue = false;  // Expect: 100-continue
    bool keep_alive = true;         // after this request
};

struct HeadError {
    int status = 400;
    std::string message;
};

// Parses `head` (everything up to and including the blank line) into `request`'s method,
// target, path (the target without its query), version and headers, and says how its body is
// framed. On error, nothing about `request` is promised.
std::optional<HeadError> parse_request_head(std::string_view head, httplib::Request& request,
                                            BodyFraming& framing);

// A chunk's size line without its CRLF ("1a2b" with optional ";extensions"): nullopt when it is
// not one, or when the size is past 2^62.
std::optional<std::uint64_t> parse_chunk_size(std::string_view line);

}  // namespace bai::http
