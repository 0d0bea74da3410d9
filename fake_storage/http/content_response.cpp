#include "fake_storage/http/content_response.h"

#include <unistd.h>

#include <memory>
#include <stdexcept>
#include <vector>

#include "common/crypto/base64.h"
#include "common/crypto/crc64.h"
#include "common/crypto/digest.h"
#include "common/text/ascii.h"
#include "fake_storage/engine/storage_error.h"
#include "fake_storage/http/storage_headers.h"

namespace bai::storage {
namespace {

constexpr std::uint64_t kSmallBody = 64 * 1024;
constexpr std::uint64_t kMaxRangeMd5 = 4 * 1024 * 1024;  // x-ms-range-get-content-md5's limit

}  // namespace

std::optional<ResolvedRange> resolve_range(const StorageRequest& r, httplib::Response& res,
                                           std::uint64_t size) {
    std::optional<ByteRange> range = read_range(r);
    if (!range) return std::nullopt;
    if (range->first >= size) {
        res.set_header("Content-Range", "bytes */" + std::to_string(size));
        fail(416, "InvalidRange", "The range specified is invalid for the current size of the resource.");
    }
    std::uint64_t last = std::min(range->last.value_or(size - 1), size - 1);
    res.status = 206;
    res.set_header("Content-Range", "bytes " + std::to_string(range->first) + "-" +
                                        std::to_string(last) + "/" + std::to_string(size));
    return ResolvedRange{range->first, last - range->first + 1};
}

void send_content(httplib::Response& res, ContentReader read, ResolvedRange range,
                  const std::string& content_type) {
    if (range.length <= kSmallBody) {
        std::string bytes(range.length, '\0');
        ssize_t n = read(bytes.data(), bytes.size(), range.first);
        if (n != static_cast<ssize_t>(bytes.size())) throw std::runtime_error("short read of content");
        res.set_content(std::move(bytes), content_type);
        return;
    }
    // One buffer per response, reused for every chunk. 1 MiB chunks: while one is read, the
    // socket still holds enough of the last for the client (4 MiB chunks left it idle; a 256 MiB
    // download into a BytesIO ran at 1530 MiB/s with them, 2100 with these).
    auto buffer = std::make_shared<std::vector<char>>(std::min<std::uint64_t>(range.length, 1 << 20));
    res.set_content_provider(
        range.length, content_type,
        [read = std::move(read), buffer, first = range.first](size_t offset, size_t size,
                                                               httplib::DataSink& sink) {
            size_t want = std::min(size, buffer->size());
            ssize_t n = read(buffer->data(), want, first + offset);
            if (n <= 0) return false;
            return sink.write(buffer->data(), static_cast<size_t>(n));
        });
}

void answer_with_content(const StorageRequest& r, httplib::Response& res, const StoredContent& c,
                         const char* range_md5_header) {
    const ContentSettings& settings = c.settings;
    res.set_header("Accept-Ranges", "bytes");
    if (!settings.content_encoding.empty()) res.set_header("Content-Encoding", settings.content_encoding);
    if (!settings.content_language.empty()) res.set_header("Content-Language", settings.content_language);
    if (!settings.cache_control.empty()) res.set_header("Cache-Control", settings.cache_control);
    if (!settings.content_disposition.empty()) {
        res.set_header("Content-Disposition", settings.content_disposition);
    }
    std::string content_type =
        settings.content_type.empty() ? "application/octet-stream" : settings.content_type;
    const std::string& md5 = settings.content_md5;
    if (r.method == "HEAD") {
        if (!md5.empty()) res.set_header("Content-MD5", md5);
        res.set_header("Content-Type", content_type);
        res.set_header("Content-Length", std::to_string(c.size));
        return;
    }
    std::optional<ResolvedRange> range = resolve_range(r, res, c.size);
    const bool range_md5 = range && text::iequals(r.header("x-ms-range-get-content-md5"), "true");
    const bool range_crc64 = range && text::iequals(r.header("x-ms-range-get-content-crc64"), "true");
    if ((range_md5 || range_crc64) && range->length > kMaxRangeMd5) {
        res.status = 200;
        res.headers.erase("Content-Range");
        fail(400, "OutOfRangeInput",
             std::string("One of the request inputs is out of range.\nReason:") +
                 (range_md5 ? "x-ms-range-get-content-md5" : "x-ms-range-get-content-crc64") +
                 " takes ranges of 4 MiB at most.");
    }
    if (range_md5 && range_crc64) {
        res.status = 200;
        res.headers.erase("Content-Range");
        fail(400, "InvalidHeaderValue",
             "The value for one of the HTTP headers is not in the correct format.\n"
             "HeaderName:x-ms-range-get-content-crc64\nHeaderValue:true\n"
             "Reason:x-ms-range-get-content-md5 and x-ms-range-get-content-crc64 are not asked together.");
    }
    // The whole content's MD5: Content-MD5 for the whole, range_md5_header (x-ms-blob-content-md5)
    // for a range (recorded: a whole blob's GET has Content-MD5 alone); a range's own MD5 only
    // when x-ms-range-get-content-md5 asks.
    if (!md5.empty() && range) res.set_header(range_md5_header, md5);
    if (!md5.empty() && !range) res.set_header("Content-MD5", md5);
    ResolvedRange part = range.value_or(ResolvedRange{0, c.size});
    // A range's own checksum, when asked for (4 MiB at most: read into memory).
    if (range_md5 || range_crc64) {
        std::string bytes(static_cast<size_t>(part.length), '\0');
        size_t have = 0;
        while (have < bytes.size()) {
            ssize_t n = c.bytes != nullptr ? static_cast<ssize_t>(c.bytes->copy(bytes.data() + have, bytes.size() - have,
                                                                                  part.first + have))
                                           : c.read(bytes.data() + have, bytes.size() - have, part.first + have);
            if (n <= 0) fail(500, "InternalError", "The content could not be read.");
            have += static_cast<size_t>(n);
        }
        if (range_md5) res.set_header("Content-MD5", crypto::base64_encode(crypto::md5(bytes)));
        if (range_crc64) res.set_header("x-ms-content-crc64", crypto::base64_encode(crypto::crc64(bytes)));
    }
    if (c.bytes != nullptr) {
        res.set_content(c.bytes->substr(part.first, part.length), content_type);
        return;
    }
    send_content(res, c.read, part, content_type);
}

}  // namespace bai::storage
