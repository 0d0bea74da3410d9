#include "common/http/request_head.h"

#include <strings.h>

namespace bai::http {
namespace {

bool is_token_char(char c) {
    if (c >= 'a' && c <= 'z') return true;
    if (c >= 'A' && c <= 'Z') return true;
    if (c >= '0' && c <= '9') return true;
    return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool is_token(std::string_view s) {
    if (s.empty()) return false;
    for (char c : s) {
        if (!is_token_char(c)) return false;
    }
    return true;
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
    return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

std::string_view trim_spaces(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

std::optional<std::uint64_t> parse_length(std::string_view text) {
    if (text.empty() || text.size() > 18) return std::nullopt;
    std::uint64_t value = 0;
    for (char c : text) {
        if (c < '0' || c > '9') return std::nullopt;
        value = value * 10 + static_cast<std::uint64_t>(c - '0');
    }
    return value;
}

HeadError bad(std::string message) { return HeadError{400, std::move(message)}; }

}  // namespace

std::optional<HeadError> parse_request_head(std::string_view head, httplib::Request& request,
                                            BodyFraming& framing) {
    if (head.size() < 4 || head.substr(head.size() - 4) != "\r\n\r\n") return bad("The request head is not terminated.");
    size_t line_end = head.find("\r\n");
    std::string_view line = head.substr(0, line_end);
    size_t first_space = line.find(' ');
    size_t last_space = line.rfind(' ');
    if (first_space == std::string_view::npos || first_space == last_space) return bad("Malformed request line.");
    std::string_view method = line.substr(0, first_space);
    std::string_view target = line.substr(first_space + 1, last_space - first_space - 1);
    std::string_view version = line.substr(last_space + 1);
    if (!is_token(method)) return bad("Malformed method.");
    if (target.empty()) return bad("Empty request target.");
    for (unsigned char c : target) {
        if (c <= ' ' || c == 0x7f) return bad("Invalid character in the request target.");
    }
    if (version != "HTTP/1.1" && version != "HTTP/1.0") {
        if (version.substr(0, 5) == "HTTP/") return HeadError{505, "HTTP version not supported."};
        return bad("Malformed HTTP version.");
    }
    request.method.assign(method);
    request.target.assign(target);
    request.path.assign(target.substr(0, target.find('?')));
    request.version.assign(version);
    framing = BodyFraming{};
    framing.keep_alive = version == "HTTP/1.1";

    std::optional<std::uint64_t> content_length;
    bool has_transfer_encoding = false;
    for (size_t at = line_end + 2; at < head.size() - 2;) {
        size_t end = head.find("\r\n", at);
        std::string_view field = head.substr(at, end - at);
        at = end + 2;
        if (field.empty() || field.front() == ' ' || field.front() == '\t') {
            return bad("Folded or empty header line.");
        }
        size_t colon = field.find(':');
        if (colon == std::string_view::npos) return bad("Header line without a colon.");
        std::string_view name = field.substr(0, colon);
        if (!is_token(name)) return bad("Malformed header name.");
        std::string_view value = trim_spaces(field.substr(colon + 1));
        for (unsigned char c : value) {
            if ((c < ' ' && c != '\t') || c == 0x7f) return bad("Invalid character in header " + std::string(name) + ".");
        }
        if (equals_ignoring_case(name, "Content-Length")) {
            auto length = parse_length(value);
            if (!length || (content_length && *content_length != *length)) {
                return bad("Invalid Content-Length.");
            }
            content_length = length;
        } else if (equals_ignoring_case(name, "Transfer-Encoding")) {
            if (!equals_ignoring_case(value, "chunked")) {
                return HeadError{501, "Transfer-Encoding " + std::string(value) + " is not supported."};
            }
            has_transfer_encoding = true;
        } else if (equals_ignoring_case(name, "Connection")) {
            if (equals_ignoring_case(value, "close")) framing.keep_alive = false;
            if (equals_ignoring_case(value, "keep-alive")) framing.keep_alive = true;
        } else if (equals_ignoring_case(name, "Expect")) {
            if (!equals_ignoring_case(value, "100-continue")) return HeadError{417, "Unsupported expectation."};
            framing.expects_continue = true;
        }
        request.headers.emplace(std::string(name), std::string(value));
    }
    if (has_transfer_encoding && content_length) {
        return bad("Both Content-Length and Transfer-Encoding.");
    }
    framing.chunked = has_transfer_encoding;
    framing.length = content_length.value_or(0);
    return std::nullopt;
}

std::optional<std::uint64_t> parse_chunk_size(std::string_view line) {
    std::string_view digits = line.substr(0, line.find(';'));
    while (!digits.empty() && (digits.back() == ' ' || digits.back() == '\t')) digits.remove_suffix(1);
    if (digits.empty() || digits.size() > 15) return std::nullopt;
    std::uint64_t size = 0;
    for (char c : digits) {
        int v;
        if (c >= '0' && c <= '9') v = c - '0';
        else if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') v = c - 'A' + 10;
        else return std::nullopt;
        size = size * 16 + static_cast<std::uint64_t>(v);
    }
    return size;
}

}  // namespace bai::http
