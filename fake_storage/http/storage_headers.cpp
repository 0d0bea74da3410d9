#include "fake_storage/http/storage_headers.h"

#include <array>
#include <charconv>

#include "common/crypto/random_id.h"
#include "common/text/markup_escape.h"
#include "common/time/timestamps.h"

namespace bai::storage {

void invalid_header(const std::string& name, const std::string& value) {
    fail(400, "InvalidHeaderValue",
         "The value for one of the HTTP headers is not in the correct format.\nHeaderName:" + name +
             "\nHeaderValue:" + value);
}

void missing_header(const std::string& name) {
    fail(400, "MissingRequiredHeader",
         "An HTTP header that's mandatory for this request is not specified.\nHeaderName:" + name);
}

void invalid_query(const std::string& name, const std::string& value) {
    fail(400, "InvalidQueryParameterValue",
         "Value for one of the query parameters specified in the request URI is invalid.\n"
         "QueryParameterName:" + name + "\nQueryParameterValue:" + value);
}

Metadata read_metadata(const StorageRequest& r) {
    Metadata metadata;
    for (const auto& [header, value] : r.http->headers) {
        if (header.size() <= 8 || strncasecmp(header.c_str(), "x-ms-meta-", 10) != 0) continue;
        std::string name = header.substr(10);
        if (!is_valid_metadata_name(name)) {
            fail(400, "InvalidMetadata",
                 "The metadata specified is invalid. It has characters that are not permitted.\n"
                 "MetadataName:" + name);
        }
        metadata[name] = value;
    }
    return metadata;
}

void write_metadata(httplib::Response& res, const Metadata& metadata) {
    for (const auto& [name, value] : metadata) res.set_header("x-ms-meta-" + name, value);
}

std::string metadata_xml(const Metadata& metadata) {
    std::string xml = "<Metadata>";
    for (const auto& [name, value] : metadata) {
        xml += "<" + name + ">" + text::markup_escape(value) + "</" + name + ">";
    }
    return xml + "</Metadata>";
}

namespace {

// The four conditional headers, as named (If-Match, If-None-Match, If-Modified-Since,
// If-Unmodified-Since, or a copy's source's), and the tag condition.
Conditions read_conditions_named(const StorageRequest& r, const std::array<const char*, 4>& names,
                                 const char* tags_header) {
    Conditions c;
    if (r.has_header(names[0])) c.if_match = r.header(names[0]);
    if (r.has_header(names[1])) c.if_none_match = r.header(names[1]);
    if (r.has_header(tags_header)) {
        c.if_tags = std::make_shared<TagExpression>(
            TagExpression::parse(r.header(tags_header), TagExpression::Use::condition));
    }
    for (auto [name, slot] : {std::pair{names[2], &c.if_modified_since}, std::pair{names[3], &c.if_unmodified_since}}) {
        if (!r.has_header(name)) continue;
        auto t = time::parse_rfc1123(r.header(name));
        if (!t) invalid_header(name, r.header(name));
        *slot = *t;
    }
    return c;
}

}  // namespace

Conditions read_conditions(const StorageRequest& r) {
    Conditions c = read_conditions_named(r, {"If-Match", "If-None-Match", "If-Modified-Since", "If-Unmodified-Since"},
                                         "x-ms-if-tags");
    if (r.has_header("x-ms-lease-id")) c.lease_id = r.header("x-ms-lease-id");
    return c;
}

Conditions read_source_conditions(const StorageRequest& r) {
    return read_conditions_named(r,
                                 {"x-ms-source-if-match", "x-ms-source-if-none-match", "x-ms-source-if-modified-since",
                                  "x-ms-source-if-unmodified-since"},
                                 "x-ms-source-if-tags");
}

std::optional<std::uint64_t> read_uint_header(const StorageRequest& r, const std::string& name) {
    if (!r.has_header(name)) return std::nullopt;
    std::string value = r.header(name);
    std::uint64_t n = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (value.empty() || ec != std::errc() || end != value.data() + value.size()) {
        invalid_header(name, value);
    }
    return n;
}

std::optional<ByteRange> read_range(const StorageRequest& r) {
    if (r.has_header("x-ms-range")) return read_range_header(r, "x-ms-range");
    // A malformed standard Range header is ignored (the whole content answers), as HTTP lets a
    // server do and the service does; a malformed x-ms-range is refused.
    try {
        return read_range_header(r, "Range");
    } catch (const StorageError&) {
        return std::nullopt;
    }
}

std::optional<ByteRange> read_range_header(const StorageRequest& r, const std::string& name) {
    if (!r.has_header(name)) return std::nullopt;
    std::string value = r.header(name);
    if (value.rfind("bytes=", 0) != 0) invalid_header(name, value);
    std::string spec = value.substr(6);
    size_t dash = spec.find('-');
    if (dash == std::string::npos || dash == 0) invalid_header(name, value);
    auto parse = [&](std::string_view s, std::uint64_t& out) {
        auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
        return !s.empty() && ec == std::errc() && end == s.data() + s.size();
    };
    ByteRange range;
    if (!parse(std::string_view(spec).substr(0, dash), range.first)) invalid_header(name, value);
    std::string_view last = std::string_view(spec).substr(dash + 1);
    if (!last.empty()) {
        std::uint64_t l = 0;
        if (!parse(last, l) || l < range.first) invalid_header(name, value);
        range.last = l;
    }
    return range;
}

namespace {
bool version_shaped(const std::string& v) {
    bool shaped = v.size() == 10 && v[4] == '-' && v[7] == '-';
    for (size_t i = 0; shaped && i < v.size(); ++i) {
        if (i != 4 && i != 7 && (v[i] < '0' || v[i] > '9')) shaped = false;
    }
    return shaped && v >= "2009-09-19";
}
}  // namespace

std::string read_version(const StorageRequest& r) {
    if (!r.has_header("x-ms-version")) {
        // A SAS request without x-ms-version is served at the SAS's own version (sv), as the
        // service does; anything else at the emulator's default.
        auto sv = r.param("sv");
        return sv && version_shaped(*sv) ? *sv : "2021-06-08";
    }
    std::string v = r.header("x-ms-version");
    if (!version_shaped(v)) invalid_header("x-ms-version", v);
    return v;
}

void set_common_headers(const StorageRequest& r, httplib::Response& res, const std::string& server,
                        const std::string& version) {
    res.set_header("x-ms-request-id", crypto::uuid4());
    res.set_header("x-ms-version", version);
    res.set_header("Date", time::format_rfc1123(time::now()));
    res.set_header("Server", server);
    if (r.has_header("x-ms-client-request-id")) {
        res.set_header("x-ms-client-request-id", r.header("x-ms-client-request-id"));
    }
}

void write_error(const httplib::Request& http, httplib::Response& res, const StorageError& error) {
    res.status = error.status();
    // The checksums of a body that was not written (a write's own, set before it failed) are no
    // part of an error (recorded: a refused Put Page has no x-ms-content-crc64).
    res.headers.erase("Content-MD5");
    res.headers.erase("x-ms-content-crc64");
    if (!res.has_header("x-ms-request-id")) res.set_header("x-ms-request-id", crypto::uuid4());
    res.set_header("x-ms-error-code", error.code());
    if (error.status() == 304 || http.method == "HEAD") return;
    std::string message = error.what();
    // The service names the header or query parameter at fault in elements of their own after
    // the message (recorded: <HeaderName>x-ms-blob-content-length</HeaderName><HeaderValue>...);
    // the errors here carry them as "\nHeaderName:..." lines of the message.
    std::string named;
    for (const char* key : {"HeaderName", "HeaderValue", "QueryParameterName", "QueryParameterValue"}) {
        const std::string marker = std::string("\n") + key + ":";
        const size_t at = message.find(marker);
        if (at == std::string::npos) continue;
        const size_t end = message.find('\n', at + marker.size());
        const std::string value = message.substr(at + marker.size(), end == std::string::npos ? end : end - at - marker.size());
        named += std::string("<") + key + ">" + text::markup_escape(value) + "</" + key + ">";
        message.erase(at, end == std::string::npos ? end : end - at);
    }
    message += "\nRequestId:" + res.get_header_value("x-ms-request-id") +
               "\nTime:" + time::format_iso8601(time::now());
    std::string detail;
    if (!error.authentication_detail().empty()) {
        detail = "<AuthenticationErrorDetail>" + text::markup_escape(error.authentication_detail()) + "</AuthenticationErrorDetail>";
    }
    // The service names where its XML reader stopped; for a document that parses but breaks a
    // rule (six CORS rules) it names none: line and position 0, an empty Reason (recorded).
    if (error.code() == "InvalidXmlDocument") detail += "<LineNumber>0</LineNumber><LinePosition>0</LinePosition><Reason />";
    res.set_content("<?xml version=\"1.0\" encoding=\"utf-8\"?><Error><Code>" +
                        text::markup_escape(error.code()) + "</Code><Message>" + text::markup_escape(message) +
                        "</Message>" + named + detail + "</Error>",
                    "application/xml");
}

void invalid_xml_document(const std::string& detail) {
    fail(400, "InvalidXmlDocument", "XML specified is not syntactically valid.\n" + detail);
}

void invalid_xml_node_value(const std::string& element, const std::string& value) {
    fail(400, "InvalidXmlNodeValue",
         "The value for one of the XML nodes is not in the correct format.\nXmlNodeName:" + element +
             "\nXmlNodeValue:" + value);
}

}  // namespace bai::storage
