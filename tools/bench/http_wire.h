// What the benchmarks' bare HTTP peers (raw_http_connection, memory_blob_server) share: writing
// all of a buffer to a socket, and the Content-Length of a message head.
#pragma once

#include <strings.h>
#include <sys/socket.h>

#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace bai::bench {

// False when the peer is gone.
inline bool send_all(int fd, std::string_view bytes) {
    while (!bytes.empty()) {
        ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
        if (n <= 0) return false;
        bytes.remove_prefix(static_cast<size_t>(n));
    }
    return true;
}

// The Content-Length of `head` (a start line and header lines, up to and including the blank
// line); 0 without one.
inline std::uint64_t content_length_of(std::string_view head) {
    std::uint64_t length = 0;
    for (size_t at = head.find("\r\n") + 2; at < head.size() - 2; at = head.find("\r\n", at) + 2) {
        if (head.size() - at > 15 && strncasecmp(head.data() + at, "content-length:", 15) == 0) {
            length = std::strtoull(head.data() + at + 15, nullptr, 10);
        }
    }
    return length;
}

}  // namespace bai::bench
