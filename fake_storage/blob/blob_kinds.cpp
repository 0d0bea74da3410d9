// Blob operations beyond block blobs' bytes: Append Block and Seal, Snapshot Blob, Get/Set Blob
// Tags, Find Blobs by Tags, Set Blob Tier.
#include "common/text/ascii.h"
#include "common/text/markup_escape.h"
#include "fake_storage/blob/blob_service.h"
#include "fake_storage/blob/blob_versions.h"
#include "fake_storage/engine/storage_error.h"
#include "fake_storage/http/storage_headers.h"
#include "fake_storage/http/storage_operations.h"

namespace bai::storage {

void BlobService::append_block(StorageCall& call) {
    const StorageRequest& r = call.request;
    check_transactional_checksums(r, *call.content, call.response);
    answer_one_checksum(r, call.response);
    auto [blob, offset] = store_.append_block(call.account.name, r.container, r.name, *call.content,
                                              read_conditions(r), read_append_conditions(r));
    call.response.status = 201;
    set_version_headers(call.response, blob.etag, blob.last_modified);
    call.response.set_header("x-ms-blob-append-offset", std::to_string(offset));
    call.response.set_header("x-ms-blob-committed-block-count", std::to_string(blob.committed_block_count));
    call.response.set_header("x-ms-request-server-encrypted", "true");
}

void BlobService::seal_blob(StorageCall& call) {
    const StorageRequest& r = call.request;
    BlobInfo blob = store_.seal_blob(call.account.name, r.container, r.name, read_conditions(r));
    set_version_headers(call.response, blob.etag, blob.last_modified);
    call.response.set_header("x-ms-blob-sealed", "true");
}

void BlobService::snapshot_blob(StorageCall& call) {
    const StorageRequest& r = call.request;
    Metadata metadata = read_metadata(r);
    BlobInfo snapshot = store_.snapshot_blob(call.account.name, r.container, r.name,
                                             metadata.empty() ? std::nullopt : std::optional(metadata),
                                             read_conditions(r));
    call.response.status = 201;
    call.response.set_header("x-ms-snapshot", snapshot.snapshot);
    set_version_headers(call.response, snapshot.etag, snapshot.last_modified);
    answer_version_id(r, call.response, snapshot.version_id);
    call.response.set_header("x-ms-request-server-encrypted", "false");
}

void BlobService::get_blob_tags(StorageCall& call) {
    const StorageRequest& r = call.request;
    const std::string snapshot = blob_target(r);
    BlobInfo blob = store_.get_blob(call.account.name, r.container, r.name, snapshot);
    const Conditions conditions = read_conditions(r);
    check_tag_condition(conditions, blob.tags);
    if (snapshot.empty()) check_lease_if_named(blob.lease, conditions.lease_id, store_.clock_now(), LeaseTarget::blob);
    call.response.set_content(tags_xml(blob.tags), "application/xml");
}

void BlobService::set_blob_tags(StorageCall& call) {
    const StorageRequest& r = call.request;
    Tags tags = parse_tags_xml(call.body);
    store_.set_blob_tags(call.account.name, r.container, r.name, blob_target(r), tags,
                         read_conditions(r));
    call.response.status = 204;
}

void BlobService::set_blob_tier(StorageCall& call) {
    const StorageRequest& r = call.request;
    if (!r.has_header("x-ms-access-tier")) missing_header("x-ms-access-tier");
    if (r.has_header("x-ms-rehydrate-priority")) {
        const std::string priority = r.header("x-ms-rehydrate-priority");
        if (!text::iequals(priority, "Standard") && !text::iequals(priority, "High")) {
            invalid_header("x-ms-rehydrate-priority", priority);
        }
    }
    auto [blob, rehydrating] = store_.set_blob_tier(call.account.name, r.container, r.name,
                                                    blob_target(r), r.header("x-ms-access-tier"),
                                                    read_conditions(r));
    call.response.status = rehydrating ? 202 : 200;
}

// GET /ACCOUNT?comp=blobs&where=... and /ACCOUNT/CONTAINER?restype=container&comp=blobs&where=...
void BlobService::find_blobs_by_tags(StorageCall& call) {
    const StorageRequest& r = call.request;
    const std::string where_text = r.param("where").value_or("");
    if (where_text.empty()) {
        fail(400, "MissingRequiredQueryParameter",
             "A query parameter that's mandatory for this request is not specified.\nQueryParameterName:where");
    }
    TagExpression where = TagExpression::parse(where_text, TagExpression::Use::find);
    ListOptions o = list_options(r);
    std::optional<std::string> container;
    if (!r.container.empty()) container = r.container;
    TaggedBlobPage page = store_.find_blobs_by_tags(call.account.name, container, where, o.marker, o.max_results);
    std::string xml = "<?xml version=\"1.0\" encoding=\"utf-8\"?><EnumerationResults ServiceEndpoint=\"" +
                      text::markup_escape(service_endpoint(call)) + "/\"><Where>" + text::markup_escape(where_text) + "</Where><Blobs>";
    for (const TaggedBlob& b : page.blobs) {
        xml += "<Blob><Name>" + text::markup_escape(b.name) + "</Name><ContainerName>" + text::markup_escape(b.container) +
               "</ContainerName><Tags><TagSet>";
        for (const auto& [key, value] : b.tags) {
            xml += "<Tag><Key>" + text::markup_escape(key) + "</Key><Value>" + text::markup_escape(value) + "</Value></Tag>";
        }
        xml += "</TagSet></Tags></Blob>";
    }
    xml += "</Blobs>";
    xml += page.next_marker.empty() ? "<NextMarker />" : "<NextMarker>" + text::markup_escape(page.next_marker) + "</NextMarker>";
    call.response.set_content(xml + "</EnumerationResults>", "application/xml");
}


void BlobService::put_page(StorageCall& call) {
    const StorageRequest& r = call.request;
    if (!r.has_header("x-ms-page-write")) missing_header("x-ms-page-write");
    const std::string write = text::lower(r.header("x-ms-page-write"));
    auto [start, end] = read_page_range(r);
    BlobInfo blob;
    if (write == "update") {
        check_transactional_checksums(r, *call.content, call.response);
        answer_one_checksum(r, call.response);
        if (call.content->size() != end - start) {
            fail(400, "InvalidHeaderValue",
                 "The value for one of the HTTP headers is not in the correct format.\nHeaderName:Content-Length\n"
                 "HeaderValue:" + std::to_string(call.content->size()));
        }
        blob = store_.put_pages(call.account.name, r.container, r.name, start, *call.content, read_conditions(r),
                                read_sequence_conditions(r));
    } else if (write == "clear") {
        if (call.content->size() != 0) {
            fail(400, "InvalidHeaderValue",
                 "The value for one of the HTTP headers is not in the correct format.\nHeaderName:Content-Length\n"
                 "HeaderValue:" + std::to_string(call.content->size()));
        }
        call.response.headers.erase("x-ms-content-crc64");
        blob = store_.clear_pages(call.account.name, r.container, r.name, start, end, read_conditions(r),
                                  read_sequence_conditions(r));
    } else {
        invalid_header("x-ms-page-write", r.header("x-ms-page-write"));
    }
    call.response.status = 201;
    set_version_headers(call.response, blob.etag, blob.last_modified);
    call.response.set_header("x-ms-blob-sequence-number", std::to_string(blob.sequence_number));
    if (write == "update") call.response.set_header("x-ms-request-server-encrypted", "true");
}

void BlobService::get_page_ranges(StorageCall& call) {
    const StorageRequest& r = call.request;
    std::optional<std::pair<std::uint64_t, std::uint64_t>> range;
    if (auto given = read_range(r)) {
        if (!given->last) missing_header("x-ms-range");
        range = std::pair{given->first, *given->last};
    }
    PageRangeList list = store_.get_page_ranges(call.account.name, r.container, r.name, blob_target(r),
                                                range, r.param("prevsnapshot").value_or(""), read_conditions(r));
    set_version_headers(call.response, list.blob.etag, list.blob.last_modified);
    call.response.set_header("x-ms-blob-content-length", std::to_string(list.blob.size));
    std::string xml = "<?xml version=\"1.0\" encoding=\"utf-8\"?><PageList>";
    // Written and cleared ranges in the order of their start, as the service lists them.
    size_t p = 0;
    size_t c = 0;
    auto element = [](const char* tag, const std::pair<std::uint64_t, std::uint64_t>& range) {
        return std::string("<") + tag + "><Start>" + std::to_string(range.first) + "</Start><End>" +
               std::to_string(range.second) + "</End></" + tag + ">";
    };
    while (p < list.pages.size() || c < list.cleared.size()) {
        if (c >= list.cleared.size() || (p < list.pages.size() && list.pages[p].first < list.cleared[c].first)) {
            // Written ranges that touch are one range, however many writes made them (recorded:
            // a blob uploaded in 4 KiB pages lists one range).
            std::pair<std::uint64_t, std::uint64_t> merged = list.pages[p++];
            while (p < list.pages.size() && list.pages[p].first == merged.second + 1) merged.second = list.pages[p++].second;
            xml += element("PageRange", merged);
        } else {
            xml += element("ClearRange", list.cleared[c++]);
        }
    }
    call.response.set_content(xml + "</PageList>", "application/xml");
}

void BlobService::set_page_blob_properties(StorageCall& call) {
    const StorageRequest& r = call.request;
    // Only a request that names content headers changes them (a resize or a new sequence number
    // alone keeps them, as the service does).
    std::optional<ContentSettings> content;
    for (const char* name : {"x-ms-blob-cache-control", "x-ms-blob-content-type", "x-ms-blob-content-md5",
                             "x-ms-blob-content-encoding", "x-ms-blob-content-language",
                             "x-ms-blob-content-disposition"}) {
        if (r.has_header(name)) content = ContentSettings{};
    }
    if (content) {
        content->content_type = r.header("x-ms-blob-content-type");
        content->content_encoding = r.header("x-ms-blob-content-encoding");
        content->content_language = r.header("x-ms-blob-content-language");
        content->cache_control = r.header("x-ms-blob-cache-control");
        content->content_disposition = r.header("x-ms-blob-content-disposition");
        content->content_md5 = r.header("x-ms-blob-content-md5");
    }
    std::optional<SequenceAction> action;
    std::optional<std::int64_t> number;
    if (r.has_header("x-ms-sequence-number-action")) {
        const std::string a = text::lower(r.header("x-ms-sequence-number-action"));
        if (a == "max") action = SequenceAction::max;
        else if (a == "update") action = SequenceAction::update;
        else if (a == "increment") action = SequenceAction::increment;
        else invalid_header("x-ms-sequence-number-action", r.header("x-ms-sequence-number-action"));
        auto n = read_uint_header(r, "x-ms-blob-sequence-number");
        if (n && *n > static_cast<std::uint64_t>(INT64_MAX)) {
            invalid_header("x-ms-blob-sequence-number", r.header("x-ms-blob-sequence-number"));
        }
        if (*action != SequenceAction::increment && !n) missing_header("x-ms-blob-sequence-number");
        if (*action == SequenceAction::increment && n) {
            invalid_header("x-ms-blob-sequence-number", r.header("x-ms-blob-sequence-number"));
        }
        if (n) number = static_cast<std::int64_t>(*n);
    }
    BlobInfo blob = store_.set_page_blob_properties(call.account.name, r.container, r.name, content,
                                                    read_uint_header(r, "x-ms-blob-content-length"), action, number,
                                                    read_conditions(r));
    set_version_headers(call.response, blob.etag, blob.last_modified);
    call.response.set_header("x-ms-blob-sequence-number", std::to_string(blob.sequence_number));
}

}  // namespace bai::storage
