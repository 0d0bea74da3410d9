#include "common/http/request_head.h"

#include <charconv>

#include "common/text/ascii.h"

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

// Digits only (no sign, no spaces), at most `max_digits` of them, in `base`.
std::optional<std::uint64_t> parse_digits(std::string_view text, size_t max_digits, int base) {
    if (text.empty() || text.size() > max_digits) return std::nullopt;
    std::uint64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
    if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
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
        std::string_view value = text::trim(field.substr(colon + 1));
        for (unsigned char c : value) {
            if ((c < ' ' && c != '\t') || c == 0x7f) return bad("Invalid character in header " + std::string(name) + ".");
        }
        if (text::iequals(name, "Content-Length")) {
            auto length = parse_digits(value, 18, 10);
            if (!length || (content_length && *content_length != *length)) {
                return bad("Invalid Content-Length.");
            }
            content_length = length;
        } else if (text::iequals(name, "Transfer-Encoding")) {
            if (!text::iequals(value, "chunked")) {
                return HeadError{501, "Transfer-Encoding " + std::string(value) + " is not supported."};
            }
            has_transfer_encoding = true;
        } else if (text::iequals(name, "Connection")) {
            if (text::iequals(value, "close")) framing.keep_alive = false;
            if (text::iequals(value, "keep-alive")) framing.keep_alive = true;
        } else if (text::iequals(name, "Expect")) {
            if (!text::iequals(value, "100-continue")) return HeadError{417, "Unsupported expectation."};
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
    return parse_digits(digits, 15, 16);
}

}  // namespace bai::http
