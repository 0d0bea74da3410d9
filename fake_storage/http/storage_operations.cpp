#include "fake_storage/http/storage_operations.h"

#include <strings.h>

#include <charconv>

#include "common/crypto/base64.h"
#include "common/http/lean_listener.h"
#include "common/http/proxied_host.h"
#include "fake_storage/engine/storage_error.h"
#include "fake_storage/http/storage_headers.h"

namespace bai::storage {

std::string service_endpoint(const StorageCall& call) {
    // The cloud's own URL for a request that came to the account's host name (no trailing '/').
    if (call.request.host_style) return (http::LeanListener::serving_tls() ? "https://" : "http://") + http::proxied_host();
    return "http://" + call.request.header("Host") + "/" + call.account.name + (call.request.secondary ? "-secondary" : "");
}

[[noreturn]] void unsupported(const StorageRequest& r) {
    fail(400, "UnsupportedHttpVerb",
         "The resource doesn't support the specified HTTP verb or query: " + r.method + " " +
             r.raw_path);
}

ListOptions list_options(const StorageRequest& r) {
    ListOptions o;
    o.prefix = r.param("prefix").value_or("");
    o.delimiter = r.param("delimiter").value_or("");
    o.marker = r.param("marker").value_or("");
    if (auto max = r.param("maxresults")) {
        int n = 0;
        auto [end, ec] = std::from_chars(max->data(), max->data() + max->size(), n);
        if (ec != std::errc() || end != max->data() + max->size() || n < 1) invalid_query("maxresults", *max);
        o.max_results = std::min(n, 5000);
    }
    return o;
}

bool includes(const StorageRequest& r, const std::string& what) {
    for (const std::string& value : r.query.count("include") ? r.query.at("include") : std::vector<std::string>{}) {
        size_t start = 0;
        while (start <= value.size()) {
            size_t comma = value.find(',', start);
            std::string item = value.substr(start, comma - start);
            if (strcasecmp(item.c_str(), what.c_str()) == 0) return true;
            if (comma == std::string::npos) break;
            start = comma + 1;
        }
    }
    return false;
}

void set_version_headers(httplib::Response& res, const std::string& etag, time::TimePoint modified) {
    res.set_header("ETag", etag);
    res.set_header("Last-Modified", time::format_rfc1123(modified));
}

// A transactional Content-MD5 must match what arrived.
void check_content_md5(const StorageRequest& r, const std::string& digest, const std::string& header) {
    if (!r.has_header(header)) return;
    std::string sent = r.header(header);
    auto decoded = crypto::base64_decode(sent);
    if (!decoded || decoded->size() != 16) {
        fail(400, "InvalidMd5",
             "The MD5 value specified in the request is invalid. The MD5 value must be 128 bits and "
             "Base64-encoded.\nHeaderName:" + header + "\nHeaderValue:" + sent);
    }
    if (*decoded != digest) {
        fail(400, "Md5Mismatch",
             "The MD5 value specified in the request did not match with the MD5 value calculated by "
             "the server.\nUserSpecifiedMd5:" + sent + "\nServerCalculatedMd5:" +
                 crypto::base64_encode(digest));
    }
}

void check_transactional_checksums(const StorageRequest& r, ContentWriter& body, httplib::Response& response) {
    const std::string crc64 = body.crc64();
    if (r.has_header("Content-MD5") && r.has_header("x-ms-content-crc64")) {
        fail(400, "BothCrc64AndMd5HeaderPresent",
             "Both x-ms-content-crc64 header and Content-MD5 header are present.");
    }
    check_crc64_header(r, "x-ms-content-crc64", crc64);
    if (r.has_header("Content-MD5")) {
        check_content_md5(r, body.md5());
        response.set_header("Content-MD5", r.header("Content-MD5"));
    }
    if (!crc64.empty()) response.set_header("x-ms-content-crc64", crypto::base64_encode(crc64));
}

void check_crc64_header(const StorageRequest& r, const std::string& header, const std::string& crc64) {
    if (!r.has_header(header)) return;
    const std::string sent = r.header(header);
    auto decoded = crypto::base64_decode(sent);
    if (!decoded || decoded->size() != 8) invalid_header(header, sent);
    if (*decoded != crc64) {
        fail(400, "Crc64Mismatch",
             "The CRC64 value specified in the request did not match with the CRC64 value calculated by the "
             "server.\nUserSpecifiedCrc64:" + sent + "\nServerCalculatedCrc64:" + crypto::base64_encode(crc64));
    }
}

void check_source_md5(const StorageRequest& r, const std::function<std::string()>& digest) {
    if (!r.has_header("x-ms-source-content-md5")) return;
    auto sent = crypto::base64_decode(r.header("x-ms-source-content-md5"));
    if (!sent || sent->size() != 16) invalid_header("x-ms-source-content-md5", r.header("x-ms-source-content-md5"));
    if (*sent != digest()) {
        fail(400, "Md5Mismatch", "The MD5 value specified in the request did not match with the MD5 value "
                                 "calculated by the server.");
    }
}

std::string block_id_param(const StorageRequest& r) {
    auto block_id = r.param("blockid");
    if (!block_id) {
        fail(400, "MissingRequiredQueryParameter",
             "A query parameter that's mandatory for this request is not specified.\n"
             "QueryParameterName:blockid");
    }
    return *block_id;
}

std::pair<std::uint64_t, std::uint64_t> read_page_range(const StorageRequest& r) {
    std::optional<ByteRange> range = r.has_header("x-ms-range") ? read_range_header(r, "x-ms-range")
                                                                : read_range_header(r, "Range");
    if (!range) missing_header("x-ms-range");
    if (!range->last || *range->last < range->first || *range->last == UINT64_MAX) {
        fail(416, "InvalidPageRange", "The page range specified is invalid.");
    }
    return {range->first, *range->last + 1};
}

AppendConditions read_append_conditions(const StorageRequest& r) {
    AppendConditions append;
    append.max_size = read_uint_header(r, "x-ms-blob-condition-maxsize");
    append.append_position = read_uint_header(r, "x-ms-blob-condition-appendpos");
    return append;
}

SequenceConditions read_sequence_conditions(const StorageRequest& r) {
    SequenceConditions c;
    auto read = [&](const char* name) -> std::optional<std::int64_t> {
        auto value = read_uint_header(r, name);
        if (value && *value > static_cast<std::uint64_t>(INT64_MAX)) invalid_header(name, r.header(name));
        if (!value) return std::nullopt;
        return static_cast<std::int64_t>(*value);
    };
    c.le = read("x-ms-if-sequence-number-le");
    c.lt = read("x-ms-if-sequence-number-lt");
    c.eq = read("x-ms-if-sequence-number-eq");
    return c;
}

}  // namespace bai::storage
