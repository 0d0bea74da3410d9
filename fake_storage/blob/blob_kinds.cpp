// Blob operations beyond block blobs' bytes: Append Block and Seal, Snapshot Blob, Get/Set Blob
// Tags, Find Blobs by Tags, Set Blob Tier.
#include "common/text/ascii.h"
#include "fake_storage/blob/blob_service.h"
#include "fake_storage/engine/storage_error.h"
#include "fake_storage/http/storage_headers.h"
#include "fake_storage/http/storage_operations.h"

namespace bai::storage {

void BlobService::append_block(StorageCall& call) {
    const StorageRequest& r = call.request;
    check_transactional_checksums(r, *call.content, call.response);
    AppendConditions append;
    append.max_size = read_uint_header(r, "x-ms-blob-condition-maxsize");
    append.append_position = read_uint_header(r, "x-ms-blob-condition-appendpos");
    auto [blob, offset] = store_.append_block(call.account.name, r.container, r.name, *call.content,
                                              read_conditions(r), append);
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
    call.response.set_header("x-ms-request-server-encrypted", "false");
}

void BlobService::get_blob_tags(StorageCall& call) {
    const StorageRequest& r = call.request;
    const std::string snapshot = r.param("snapshot").value_or("");
    BlobInfo blob = store_.get_blob(call.account.name, r.container, r.name, snapshot);
    const Conditions conditions = read_conditions(r);
    if (conditions.if_tags && !conditions.if_tags->matches(blob.tags)) {
        fail(412, "ConditionNotMet", "The condition specified using HTTP conditional header(s) is not met.");
    }
    if (snapshot.empty()) check_lease_if_named(blob.lease, conditions.lease_id, store_.clock_now(), LeaseTarget::blob);
    call.response.set_content(tags_xml(blob.tags), "application/xml");
}

void BlobService::set_blob_tags(StorageCall& call) {
    const StorageRequest& r = call.request;
    Tags tags = parse_tags_xml(call.body);
    store_.set_blob_tags(call.account.name, r.container, r.name, r.param("snapshot").value_or(""), tags,
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
                                                    r.param("snapshot").value_or(""), r.header("x-ms-access-tier"),
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
                      xml_escape(service_endpoint(call)) + "/\"><Where>" + xml_escape(where_text) + "</Where><Blobs>";
    for (const TaggedBlob& b : page.blobs) {
        xml += "<Blob><Name>" + xml_escape(b.name) + "</Name><ContainerName>" + xml_escape(b.container) +
               "</ContainerName><Tags><TagSet>";
        for (const auto& [key, value] : b.tags) {
            xml += "<Tag><Key>" + xml_escape(key) + "</Key><Value>" + xml_escape(value) + "</Value></Tag>";
        }
        xml += "</TagSet></Tags></Blob>";
    }
    xml += "</Blobs>";
    xml += page.next_marker.empty() ? "<NextMarker />" : "<NextMarker>" + xml_escape(page.next_marker) + "</NextMarker>";
    call.response.set_content(xml + "</EnumerationResults>", "application/xml");
}

}  // namespace bai::storage
