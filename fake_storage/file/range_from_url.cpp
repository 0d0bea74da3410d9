// Put Range From URL: `PUT ?comp=range` with x-ms-copy-source, x-ms-source-range and no body.
// The bytes come from a file of this emulator (of any share or account, a share snapshot's too),
// read with its own File SAS (its share's stored policies included) or the key of its account
// when that key signed the request, as Copy File reads its source.
#include <unistd.h>

#include "common/crypto/base64.h"
#include "common/text/ascii.h"
#include "fake_storage/blob/copy_source.h"
#include "fake_storage/engine/share_snapshot_names.h"
#include "fake_storage/engine/storage_error.h"
#include "fake_storage/file/file_service.h"
#include "fake_storage/http/lease_headers.h"
#include "fake_storage/http/storage_headers.h"
#include "fake_storage/http/storage_operations.h"

namespace bai::storage {

void FileService::put_range_from_url(StorageCall& call) {
    const StorageRequest& r = call.request;
    if (!r.has_header("x-ms-write")) missing_header("x-ms-write");
    if (!text::iequals(r.header("x-ms-write"), "update")) invalid_header("x-ms-write", r.header("x-ms-write"));
    std::optional<ByteRange> range = read_range(r);
    if (!range || !range->last) missing_header("x-ms-range");
    const std::uint64_t length = *range->last - range->first + 1;
    if (length > kMaxRangeSize) invalid_header("x-ms-range", r.header("x-ms-range"));
    std::optional<ByteRange> source_range = read_range_header(r, "x-ms-source-range");
    if (!source_range) missing_header("x-ms-source-range");
    if (!source_range->last || *source_range->last - source_range->first + 1 != length) {
        invalid_header("x-ms-source-range", r.header("x-ms-source-range"));
    }
    const std::string url = r.header("x-ms-copy-source");
    CopySource source = parse_copy_source(url, r.header("Host"), "x-ms-copy-source", ".file.core.windows.net");
    if (source.name.empty()) invalid_header("x-ms-copy-source", url);
    authorize_copy_source(
        source, call, accounts_, [](const std::string&, const std::string&) { return false; }, true,
        [this](const std::string& account, const std::string& share, const std::string& id) {
            return stored_policy(account, share, id);
        },
        SasService::file);
    OpenFile from = open_copy_source(source, url);
    // A source range past the source's end, as the blobs' From URL writes answer it.
    if (*source_range->last >= from.info.size) {
        fail(416, "InvalidRange", "The range specified is invalid for the current size of the resource.");
    }
    std::unique_ptr<ContentWriter> bytes = files_.begin(true, true);
    bytes->append_from(from.fd, source_range->first, length);
    const std::string md5 = bytes->md5();
    const std::string crc64 = bytes->crc64();
    if (r.has_header("x-ms-source-content-md5") && r.has_header("x-ms-source-content-crc64")) {
        fail(400, "BothCrc64AndMd5HeaderPresent", "Both x-ms-content-crc64 header and Content-MD5 header are present.");
    }
    check_source_md5(r, [&] { return md5; });
    check_crc64_header(r, "x-ms-source-content-crc64", crc64);
    ShareEntry e = store_.put_range(call.account.name, r.container, r.name, range->first, *bytes,
                                    read_lease_id(r, "x-ms-lease-id"));
    call.response.status = 201;
    set_version_headers(call.response, e.etag, e.last_modified);
    // The service answers the range's CRC64, asked or not (recorded), and its MD5 when one was given.
    call.response.set_header("x-ms-content-crc64", crypto::base64_encode(crc64));
    if (r.has_header("x-ms-source-content-md5")) call.response.set_header("Content-MD5", crypto::base64_encode(md5));
    call.response.set_header("x-ms-request-server-encrypted", "true");
}

}  // namespace bai::storage
