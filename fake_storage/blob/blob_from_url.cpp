// The writes whose bytes come from another blob (x-ms-copy-source) rather than the request body:
// Put Block From URL, Append Block From URL, Put Page From URL; Incremental Copy Blob; and the MD5
// of a copy's source. Their source is authorized on its own (its SAS or a public container, never
// the request's key: copy_source.h) and checked against the x-ms-source-if-* conditions.
#include <functional>

#include "common/crypto/base64.h"
#include "common/crypto/crc64.h"
#include "common/crypto/digest.h"
#include "common/text/ascii.h"
#include "fake_storage/blob/blob_service.h"
#include "fake_storage/blob/copy_source.h"
#include "fake_storage/engine/storage_error.h"
#include "fake_storage/http/storage_headers.h"
#include "fake_storage/http/storage_operations.h"

namespace bai::storage {

void BlobService::authorize_source(const CopySource& source, const StorageCall& call, bool key_covers_own_account) {
    authorize_copy_source(
        source, call, accounts_,
        [this](const std::string& account, const std::string& container) { return container_is_public(account, container); },
        key_covers_own_account,
        [this](const std::string& account, const std::string& container, const std::string& id) {
            return stored_policy(account, container, id);
        });
}

namespace {

// Hands the bytes [first, end) of an opened blob to `take`, a megabyte at a time.
void read_bytes(const OpenBlob& blob, std::uint64_t first, std::uint64_t end,
                const std::function<void(std::string_view)>& take) {
    std::vector<char> buffer(1 << 20);
    for (std::uint64_t at = first; at < end;) {
        ssize_t n = blob.read(buffer.data(), static_cast<size_t>(std::min<std::uint64_t>(buffer.size(), end - at)), at);
        if (n <= 0) fail(500, "InternalError", "The source blob could not be read.");
        take(std::string_view(buffer.data(), static_cast<size_t>(n)));
        at += static_cast<std::uint64_t>(n);
    }
}

// x-ms-source-content-md5 / -crc64 against the bytes read.
void check_source_checksums(const StorageRequest& r, const std::string& md5, const std::string& crc64) {
    if (r.has_header("x-ms-source-content-md5") && r.has_header("x-ms-source-content-crc64")) {
        fail(400, "BothCrc64AndMd5HeaderPresent", "Both x-ms-content-crc64 header and Content-MD5 header are present.");
    }
    check_source_md5(r, [&] { return md5; });
    check_crc64_header(r, "x-ms-source-content-crc64", crc64);
}

// The answer's checksums of the bytes written: x-ms-content-crc64 when it was asked for, else
// Content-MD5 (Put Block and Append Block From URL); Put Page From URL answers the CRC64 unless
// an MD5 was asked for (recorded: x-ms-content-crc64 alone for a page written without either).
void answer_source_checksums(const StorageRequest& r, httplib::Response& response, const std::string& md5,
                             const std::string& crc64, bool crc64_by_default) {
    const bool crc64_answer = r.has_header("x-ms-source-content-crc64") ||
                              (crc64_by_default && !r.has_header("x-ms-source-content-md5"));
    if (crc64_answer) response.set_header("x-ms-content-crc64", crypto::base64_encode(crc64));
    if (!crc64_by_default || r.has_header("x-ms-source-content-md5")) {
        response.set_header("Content-MD5", crypto::base64_encode(md5));
    }
}

}  // namespace

std::pair<std::string, std::string> BlobService::checksums_of_blob(const std::string& account,
                                                                   const std::string& container,
                                                                   const std::string& name,
                                                                   const std::string& snapshot) {
    OpenBlob blob = store_.open_copy_source(account, container, name, snapshot);
    crypto::Md5 md5;
    crypto::Crc64 crc64;
    read_bytes(blob, 0, blob.info.size, [&](std::string_view bytes) {
        md5.update(bytes);
        crc64.update(bytes);
    });
    return {md5.finish(), crc64.bytes()};
}

BlobService::SourceRange BlobService::read_source_range(StorageCall& call, std::uint64_t max_size,
                                                       bool range_required) {
    const StorageRequest& r = call.request;
    CopySource source = parse_copy_source(r.header("x-ms-copy-source"), r.header("Host"));
    authorize_source(source, call, /*key_covers_own_account=*/false);
    const Conditions source_conditions = read_source_conditions(r);
    std::optional<ByteRange> range = read_range_header(r, "x-ms-source-range");
    if (range_required && !range) missing_header("x-ms-source-range");
    OpenBlob blob = store_.open_copy_source(source.account, source.container, source.name, source.snapshot);
    check_source_conditions(source_conditions, Version{blob.info.etag, blob.info.last_modified, &blob.info.tags},
                            SourceRead::ranged);
    if (blob.info.tier == "Archive") {
        fail(409, "CannotVerifyCopySource", "This operation is not permitted on an archived blob.");
    }
    std::uint64_t first = 0;
    std::uint64_t end = blob.info.size;
    if (range) {
        first = range->first;
        end = range->last ? *range->last + 1 : blob.info.size;
        if (first >= blob.info.size || end > blob.info.size || end <= first) {
            fail(416, "InvalidRange", "The range specified is invalid for the current size of the resource.");
        }
    }
    if (end - first > max_size) {
        fail(413, "RequestBodyTooLarge", "The request body is too large and exceeds the maximum permissible limit.");
    }
    std::unique_ptr<ContentWriter> writer = files_.begin(true, true);
    read_bytes(blob, first, end, [&](std::string_view bytes) { writer->append(bytes); });
    SourceRange out{std::move(writer), "", ""};
    out.md5 = out.bytes->md5();
    out.crc64 = out.bytes->crc64();
    check_source_checksums(r, out.md5, out.crc64);
    return out;
}

// Stages a block read from another blob (x-ms-source-range: all of it when not given).
void BlobService::put_block_from_url(StorageCall& call) {
    const StorageRequest& r = call.request;
    const std::string block_id = block_id_param(r);
    SourceRange source = read_source_range(call, kMaxBlockSize, false);
    store_.put_block(call.account.name, r.container, r.name, block_id, *source.bytes, read_conditions(r).lease_id);
    call.response.status = 201;
    answer_source_checksums(r, call.response, source.md5, source.crc64, false);
    call.response.set_header("x-ms-request-server-encrypted", "true");
}

// Appends bytes read from another blob, with Append Block's conditions and answer.
void BlobService::append_block_from_url(StorageCall& call) {
    const StorageRequest& r = call.request;
    const AppendConditions append = read_append_conditions(r);
    const Conditions conditions = read_conditions(r);
    SourceRange source = read_source_range(call, kMaxAppendBlockSize, false);
    auto [blob, offset] = store_.append_block(call.account.name, r.container, r.name, *source.bytes, conditions, append);
    call.response.status = 201;
    answer_source_checksums(r, call.response, source.md5, source.crc64, false);
    set_version_headers(call.response, blob.etag, blob.last_modified);
    call.response.set_header("x-ms-blob-append-offset", std::to_string(offset));
    call.response.set_header("x-ms-blob-committed-block-count", std::to_string(blob.committed_block_count));
    call.response.set_header("x-ms-request-server-encrypted", "true");
}

// Writes pages (x-ms-range) with bytes read from another blob (x-ms-source-range, the same length).
void BlobService::put_page_from_url(StorageCall& call) {
    const StorageRequest& r = call.request;
    if (!r.has_header("x-ms-page-write")) missing_header("x-ms-page-write");
    if (!text::iequals(r.header("x-ms-page-write"), "update")) invalid_header("x-ms-page-write", r.header("x-ms-page-write"));
    const auto [start, end] = read_page_range(r);
    std::optional<ByteRange> source_range = read_range_header(r, "x-ms-source-range");
    if (!source_range) missing_header("x-ms-source-range");
    if (!source_range->last || *source_range->last < source_range->first ||
        *source_range->last - source_range->first != end - 1 - start) {
        invalid_header("x-ms-source-range", r.header("x-ms-source-range"));
    }
    const Conditions conditions = read_conditions(r);
    const SequenceConditions sequence = read_sequence_conditions(r);
    SourceRange source = read_source_range(call, kMaxPutPage, true);
    BlobInfo blob = store_.put_pages(call.account.name, r.container, r.name, start, *source.bytes, conditions, sequence);
    call.response.status = 201;
    answer_source_checksums(r, call.response, source.md5, source.crc64, true);
    set_version_headers(call.response, blob.etag, blob.last_modified);
    call.response.set_header("x-ms-blob-sequence-number", std::to_string(blob.sequence_number));
    call.response.set_header("x-ms-request-server-encrypted", "true");
}

// Incremental Copy Blob: the source must be a page blob snapshot, public or with its own SAS (the
// request's key does not cover it, as the service documents); done at once, as every copy here.
void BlobService::incremental_copy_blob(StorageCall& call) {
    const StorageRequest& r = call.request;
    CopySource source = parse_copy_source(r.header("x-ms-copy-source"), r.header("Host"));
    authorize_source(source, call, /*key_covers_own_account=*/false);
    BlobStore::CopyRequest copy;
    copy.source_url = r.header("x-ms-copy-source");
    copy.source_snapshot = source.snapshot;
    copy.source_conditions = read_source_conditions(r);
    BlobInfo b = store_.incremental_copy(call.account.name, r.container, r.name, source.account, source.container,
                                         source.name, copy, write_conditions(call));
    call.response.status = 202;
    set_version_headers(call.response, b.etag, b.last_modified);
    call.response.set_header("x-ms-copy-id", b.copy.id);
    call.response.set_header("x-ms-copy-status", b.copy.status);
}

}  // namespace bai::storage
