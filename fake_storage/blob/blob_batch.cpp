#include "fake_storage/blob/blob_batch.h"

#include <optional>
#include <vector>

#include "common/crypto/random_id.h"
#include "common/http/lean_listener.h"
#include "common/text/ascii.h"
#include "fake_storage/engine/storage_error.h"
#include "fake_storage/http/storage_headers.h"

namespace bai::storage {
namespace {

constexpr size_t kMaxParts = 256;
constexpr std::string_view kCrlf = "\r\n";

[[noreturn]] void invalid_input() { fail(400, "InvalidInput", "One of the request inputs is not valid."); }

// The boundary of Content-Type: multipart/mixed; boundary=B (the parameter's name in any case,
// spaces around its value allowed; one boundary only).
std::string boundary_of(const std::string& content_type) {
    std::optional<std::string> boundary;
    for (const std::string& item : text::split_list(content_type, ';')) {
        if (item.size() < 9 || !text::iequals(std::string_view(item).substr(0, 9), "boundary=")) continue;
        if (boundary) invalid_input();
        boundary = std::string(text::trim(std::string_view(item).substr(9)));
        if (boundary->size() >= 2 && boundary->front() == '"' && boundary->back() == '"') {
            boundary = boundary->substr(1, boundary->size() - 2);
        }
    }
    if (!boundary || boundary->empty()) invalid_header("Content-Type", content_type);
    return *boundary;
}

// Header lines up to an empty line, from `at`; false when the text ends first.
bool read_headers(std::string_view text, size_t& at, const std::function<void(std::string, std::string)>& take) {
    while (true) {
        size_t end = text.find(kCrlf, at);
        if (end == std::string_view::npos) return false;
        std::string_view line = text.substr(at, end - at);
        at = end + kCrlf.size();
        if (line.empty()) return true;
        size_t colon = line.find(':');
        if (colon == std::string_view::npos || colon == 0) invalid_input();
        take(std::string(text::trim(line.substr(0, colon))), std::string(text::trim(line.substr(colon + 1))));
    }
}

// The parts of the body: each "Content-Type: application/http" with a Content-ID, then the
// request line and headers of a request without a body.
std::vector<BatchPart> parse_parts(std::string_view body, const std::string& boundary, const std::string& account) {
    const std::string delimiter = "--" + boundary;
    std::vector<BatchPart> parts;
    size_t at = body.find(delimiter);
    if (at == std::string_view::npos) invalid_input();
    while (true) {
        at += delimiter.size();
        if (body.substr(at, 2) == "--") break;  // the closing delimiter
        if (body.substr(at, 2) != kCrlf) invalid_input();
        at += 2;
        size_t next = body.find("\r\n" + delimiter, at);
        if (next == std::string_view::npos) invalid_input();
        std::string_view text = body.substr(0, next + kCrlf.size());
        BatchPart part;
        bool has_id = false;
        if (!read_headers(text, at, [&](std::string name, std::string value) {
                if (text::iequals(name, "Content-ID")) {
                    part.content_id = value;
                    has_id = true;
                }
            })) {
            invalid_input();
        }
        if (!has_id) invalid_input();
        size_t line_end = text.find(kCrlf, at);
        if (line_end == std::string_view::npos) invalid_input();
        std::vector<std::string> request_line;
        for (const std::string& word : text::split_list(text.substr(at, line_end - at), ' ')) request_line.push_back(word);
        if (request_line.size() != 3 || !request_line[2].starts_with("HTTP/1.")) invalid_input();
        at = line_end + kCrlf.size();
        part.request.method = request_line[0];
        // The path names the container and blob, after the account (as the JavaScript SDK writes
        // it) or not (as the Python SDK does): the account is the batch's own either way.
        std::string target = request_line[1];
        if (target.empty() || target[0] != '/') target = "/" + target;
        if (target.ends_with("?")) target.pop_back();
        const std::string own = "/" + account;
        const bool has_account = target.starts_with(own + "/") || target == own || target.starts_with(own + "?");
        part.request.target = has_account ? target : own + target;
        if (!read_headers(text, at, [&](std::string name, std::string value) {
                part.request.headers.emplace(std::move(name), std::move(value));
            })) {
            invalid_input();
        }
        parts.push_back(std::move(part));
        if (parts.size() > kMaxParts) {
            fail(400, "ExceedsMaxBatchRequestCount", "The batch operation exceeds maximum number of allowed subrequests.");
        }
        at = next + kCrlf.size();
    }
    if (parts.empty()) invalid_input();
    return parts;
}

// What a part asks for: Delete Blob (no comp, no restype) or Set Blob Tier (comp=tier), of a
// blob (the path names a container and a blob). Anything else is refused before it is served.
std::string operation_of(const httplib::Request& r) {
    const size_t question = r.target.find('?');
    const std::string_view path = std::string_view(r.target).substr(0, question);
    // /ACCOUNT/CONTAINER/BLOB...: two slashes after the first, and something after the second.
    const size_t container = path.find('/', 1);
    const size_t blob = container == std::string_view::npos ? container : path.find('/', container + 1);
    if (blob == std::string_view::npos || blob + 1 >= path.size() || blob == container + 1) invalid_input();
    std::vector<std::string> comps;
    bool restype = false;
    if (question != std::string::npos) {
        for (const std::string& pair : text::split_list(std::string_view(r.target).substr(question + 1), '&')) {
            const std::string key = text::lower(pair.substr(0, pair.find('=')));
            if (key == "comp") comps.push_back(pair.substr(pair.find('=') + 1));
            if (key == "restype") restype = true;
        }
    }
    if (restype || comps.size() > 1) invalid_input();
    if (r.method == "DELETE" && comps.empty()) return "DeleteBlob";
    if (r.method == "PUT" && comps.size() == 1 && comps.front() == "tier") return "SetBlobTier";
    invalid_input();
}

void write_part(std::string& out, const std::string& delimiter, const std::optional<std::string>& content_id,
                const httplib::Response& res) {
    out += delimiter;
    out += kCrlf;
    out += "Content-Type: application/http\r\n";
    if (content_id) out += "Content-ID: " + *content_id + "\r\n";
    out += kCrlf;
    out += "HTTP/1.1 " + std::to_string(res.status) + " " + http::reason_phrase(res.status) + "\r\n";
    for (const auto& [name, value] : res.headers) out += name + ": " + value + "\r\n";
    if (!res.body.empty()) {
        out += "Content-Length: " + std::to_string(res.body.size()) + "\r\n\r\n" + res.body;
    }
    out += kCrlf;
}

}  // namespace

std::vector<BatchPart> parse_batch(std::string_view body, const std::string& content_type, const std::string& account,
                                   const std::string& container) {
    std::vector<BatchPart> parts = parse_parts(body, boundary_of(content_type), account);
    const std::string first = operation_of(parts.front().request);
    const std::string prefix = "/" + account + "/" + container + "/";
    for (const BatchPart& p : parts) {
        if (operation_of(p.request) != first) {
            fail(400, "AllBatchSubRequestsShouldBeSameApi", "All batch subrequests should be the same api.");
        }
        // A batch sent to a container names blobs of that container only.
        if (!container.empty() && !p.request.target.starts_with(prefix)) invalid_input();
    }
    return parts;
}

void answer_batch(StorageCall& call, const std::string& container, const ServePart& serve_part) {
    const std::string response_boundary = "batchresponse_" + crypto::uuid4();
    const std::string delimiter = "--" + response_boundary;
    std::string out;
    if (!call.request.has_header("Content-Type")) missing_header("Content-Type");
    try {
        std::vector<BatchPart> parts =
            parse_batch(call.body, call.request.header("Content-Type"), call.request.account, container);
        const std::string version = read_version(call.request);
        for (BatchPart& p : parts) {
            httplib::Response res;
            // A part without x-ms-version is answered at the batch's (the SDKs send none in parts).
            const bool versioned = p.request.has_header("x-ms-version");
            serve_part(p.request, res);
            if (!versioned) {
                res.headers.erase("x-ms-version");
                res.set_header("x-ms-version", version);
            }
            write_part(out, delimiter, p.content_id, res);
        }
    } catch (const StorageError& e) {
        // The batch itself is malformed: its one answer says why.
        out.clear();
        httplib::Response res;
        write_error(*call.request.http, res, e);
        write_part(out, delimiter, std::nullopt, res);
    }
    out += delimiter + "--\r\n";
    call.response.status = 202;
    call.response.set_content(out, "multipart/mixed; boundary=" + response_boundary);
}

}  // namespace bai::storage
