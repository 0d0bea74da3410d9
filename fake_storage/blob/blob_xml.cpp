#include "fake_storage/blob/blob_xml.h"

#include <algorithm>

#include "common/text/markup_escape.h"
#include "fake_storage/engine/share_snapshot_names.h"
#include "fake_storage/http/listing_xml.h"
#include "fake_storage/http/storage_headers.h"

namespace bai::storage {
namespace {

std::string lease_xml(const Lease& lease, time::TimePoint now) {
    const LeaseReport report = report_lease(lease, now);
    std::string xml = xml_element("LeaseStatus", report.status) + xml_element("LeaseState", report.state);
    if (report.duration != nullptr) xml += xml_element("LeaseDuration", report.duration);
    return xml;
}

std::string blob_properties(const BlobInfo& b, const BlobListIncludes& include, time::TimePoint now) {
    const ContentSettings& c = b.content;
    std::string xml = "<Properties>";
    xml += xml_element("Creation-Time", time::format_rfc1123(b.created));
    xml += xml_element("Last-Modified", time::format_rfc1123(b.last_modified));
    // List Blobs writes a blob's ETag without the quotes its header has (List Containers keeps them).
    std::string_view etag = b.etag;
    if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') etag = etag.substr(1, etag.size() - 2);
    xml += xml_element("Etag", std::string(etag));
    xml += "<Content-Length>" + std::to_string(b.size) + "</Content-Length>";
    xml += xml_element("Content-Type", c.content_type);
    xml += xml_element("Content-Encoding", c.content_encoding);
    xml += xml_element("Content-Language", c.content_language);
    xml += xml_element("Content-CRC64", "");
    xml += xml_element("Content-MD5", c.content_md5);
    xml += xml_element("Cache-Control", c.cache_control);
    xml += xml_element("Content-Disposition", c.content_disposition);
    if (include.last_access_time) xml += xml_element("LastAccessTime", time::format_rfc1123(last_access_time(b)));
    if (b.type == BlobType::page) xml += "<x-ms-blob-sequence-number>" + std::to_string(b.sequence_number) + "</x-ms-blob-sequence-number>";
    xml += std::string("<BlobType>") + blob_type_name(b.type) + "</BlobType>";
    if (b.type == BlobType::block) {
        xml += xml_element("AccessTier", b.tier.empty() ? "Hot" : b.tier);
        if (b.tier.empty()) {
            xml += "<AccessTierInferred>true</AccessTierInferred>";
        } else {
            xml += xml_element("AccessTierChangeTime", time::format_rfc1123(b.tier_changed));
        }
        if (!b.archive_status.empty()) xml += xml_element("ArchiveStatus", b.archive_status);
    }
    // A snapshot is never leased, and is listed without lease elements (recorded).
    if (!b.is_snapshot() && !b.is_deleted()) xml += lease_xml(b.lease, now);
    xml += "<ServerEncrypted>true</ServerEncrypted>";
    if (b.is_deleted()) {
        // When it was deleted, and the whole days left of its retention (recorded: 1 of 2 at once).
        const auto deleted = time::parse_iso8601(b.deleted_time());
        const auto left = std::chrono::hours(24 * include.retention_days) - (deleted ? now - *deleted : std::chrono::hours(0));
        xml += xml_element("DeletedTime", deleted ? time::format_rfc1123(*deleted) : "");
        xml += "<RemainingRetentionDays>" +
               std::to_string(std::max<long long>(0, std::chrono::floor<std::chrono::hours>(left).count() / 24)) +
               "</RemainingRetentionDays>";
    }
    if (b.type == BlobType::append) xml += std::string("<Sealed>") + (b.sealed ? "true" : "false") + "</Sealed>";
    if (!b.tags.empty()) xml += "<TagCount>" + std::to_string(b.tags.size()) + "</TagCount>";
    if (b.copy.incremental) xml += "<IncrementalCopy>true</IncrementalCopy>";
    if (include.copy && !b.copy.empty()) {
        xml += xml_element("CopyId", b.copy.id) + xml_element("CopySource", b.copy.source) + xml_element("CopyStatus", b.copy.status) +
               xml_element("CopyProgress", b.copy.progress) +
               xml_element("CopyCompletionTime", time::format_rfc1123(b.copy.completed));
        if (b.copy.incremental) xml += xml_element("DestinationSnapshot", b.copy.destination_snapshot);
    }
    return xml + "</Properties>";
}

std::string tags_element(const Tags& tags) {
    std::string xml = "<Tags><TagSet>";
    for (const auto& [key, value] : tags) xml += "<Tag>" + xml_element("Key", key) + xml_element("Value", value) + "</Tag>";
    return xml + "</TagSet></Tags>";
}

}  // namespace

std::string list_containers_xml(const std::string& endpoint, const ListOptions& o,
                                const ContainerListPage& page, bool include_metadata, time::TimePoint now,
                                int retention_days) {
    std::string xml = "<?xml version=\"1.0\" encoding=\"utf-8\"?><EnumerationResults ServiceEndpoint=\"" +
                      text::markup_escape(endpoint) + "/\">" + paging_xml(o, false) + "<Containers>";
    for (const ContainerInfo& c : page.containers) {
        const bool deleted = !c.deleted_version.empty();
        const time::TimePoint deleted_at = deleted ? deleted_share_time(c.deleted_version).value_or(now) : now;
        xml += "<Container>" + xml_element("Name", c.name);
        if (deleted) xml += "<Deleted>true</Deleted>" + xml_element("Version", c.deleted_version);
        xml += "<Properties>";
        xml += xml_element("Last-Modified", time::format_rfc1123(c.last_modified));
        xml += xml_element("Etag", c.etag);
        if (!deleted) {
            xml += lease_xml(c.lease, now);
        } else if (now - deleted_at < BlobStore::kContainerBeingDeleted) {
            // Listed as the service lists one it is still deleting: under a fixed lease, which
            // has expired in its listings after that (recorded).
            xml += "<LeaseStatus>locked</LeaseStatus><LeaseState>leased</LeaseState><LeaseDuration>fixed</LeaseDuration>";
        } else {
            xml += "<LeaseStatus>unlocked</LeaseStatus><LeaseState>expired</LeaseState>";
        }
        if (!c.public_access.empty()) xml += xml_element("PublicAccess", c.public_access);
        // Every container is encrypted with the account's key (no encryption scopes here).
        xml += "<DefaultEncryptionScope>$account-encryption-key</DefaultEncryptionScope>"
               "<DenyEncryptionScopeOverride>false</DenyEncryptionScopeOverride>";
        xml += "<HasImmutabilityPolicy>false</HasImmutabilityPolicy><HasLegalHold>false</HasLegalHold>";
        if (deleted) {
            const auto days_gone = std::chrono::duration_cast<std::chrono::hours>(now - deleted_at).count() / 24;
            xml += xml_element("DeletedTime", time::format_rfc1123(deleted_at));
            xml += "<RemainingRetentionDays>" + std::to_string(std::max<long long>(0, retention_days - days_gone)) +
                   "</RemainingRetentionDays>";
        }
        xml += "</Properties>";
        if (include_metadata) xml += metadata_xml(c.metadata);
        xml += "</Container>";
    }
    xml += "</Containers>" + xml_element("NextMarker", page.next_marker) + "</EnumerationResults>";
    return xml;
}

std::string list_blobs_xml(const std::string& endpoint, const std::string& container,
                           const ListOptions& o, const BlobListPage& page, const BlobListIncludes& include,
                           time::TimePoint now) {
    std::string xml = "<?xml version=\"1.0\" encoding=\"utf-8\"?><EnumerationResults ServiceEndpoint=\"" +
                      text::markup_escape(endpoint) + "/\" ContainerName=\"" + text::markup_escape(container) + "\">" +
                      paging_xml(o, true) + "<Blobs>";
    for (const BlobListEntry& e : page.entries) {
        if (e.is_prefix) {
            xml += "<BlobPrefix>" + xml_element("Name", e.prefix) + "</BlobPrefix>";
            continue;
        }
        xml += "<Blob>" + xml_element("Name", e.blob.name);
        if (e.blob.is_snapshot()) xml += xml_element("Snapshot", e.blob.snapshot);
        if (e.blob.is_deleted()) {
            if (!e.blob.key_before_deletion().empty()) xml += xml_element("Snapshot", e.blob.key_before_deletion());
            xml += "<Deleted>true</Deleted>";
        }
        if (include.version_ids && !e.blob.version_id.empty()) {
            xml += xml_element("VersionId", e.blob.version_id);
            if (e.blob.is_current_version()) xml += "<IsCurrentVersion>true</IsCurrentVersion>";
        }
        xml += blob_properties(e.blob, include, now);
        if (include.metadata) xml += metadata_xml(e.blob.metadata);
        // Object replication's source rules: none here, listed empty (recorded, with or without
        // include=metadata).
        if (include.or_metadata) xml += "<OrMetadata />";
        if (include.tags && !e.blob.tags.empty()) xml += tags_element(e.blob.tags);
        xml += "</Blob>";
    }
    xml += "</Blobs>" + xml_element("NextMarker", page.next_marker) + "</EnumerationResults>";
    return xml;
}

std::string block_list_xml(const BlockLists& lists, bool committed, bool uncommitted) {
    auto blocks = [](const char* tag, const std::vector<BlockInfo>& list) {
        std::string xml = std::string("<") + tag + ">";
        for (const BlockInfo& b : list) {
            xml += "<Block>" + xml_element("Name", b.id) + "<Size>" + std::to_string(b.size) + "</Size></Block>";
        }
        return xml + "</" + tag + ">";
    };
    std::string xml = "<?xml version=\"1.0\" encoding=\"utf-8\"?><BlockList>";
    if (committed) xml += blocks("CommittedBlocks", lists.committed);
    if (uncommitted) xml += blocks("UncommittedBlocks", lists.uncommitted);
    return xml + "</BlockList>";
}

}  // namespace bai::storage
