#include "fake_storage/file/file_xml.h"

#include "common/text/markup_escape.h"
#include <algorithm>

#include "fake_storage/engine/share_snapshot_names.h"
#include "fake_storage/file/file_permissions.h"
#include "fake_storage/http/listing_xml.h"
#include "fake_storage/http/storage_headers.h"

namespace bai::storage {

std::string list_shares_xml(const std::string& endpoint, const ListOptions& o, const SharePage& page,
                            const ListSharesShape& shape) {
    std::string xml = "<?xml version=\"1.0\" encoding=\"utf-8\"?><EnumerationResults ServiceEndpoint=\"" +
                      text::markup_escape(endpoint) + "/\">" + paging_xml(o, false) + "<Shares>";
    for (const ShareInfo& s : page.shares) {
        xml += "<Share>" + xml_element("Name", s.name);
        if (!s.snapshot.empty()) xml += xml_element("Snapshot", s.snapshot);
        const bool deleted = !s.deleted_version.empty();
        if (deleted) xml += "<Deleted>true</Deleted>" + xml_element("Version", s.deleted_version);
        xml += "<Properties>";
        xml += xml_element("Last-Modified", time::format_rfc1123(s.last_modified));
        xml += xml_element("Etag", s.etag);
        if (shape.leases && deleted) {
            xml += "<LeaseStatus>unlocked</LeaseStatus><LeaseState>broken</LeaseState>";  // as the service lists one
        } else if (shape.leases) {
            const LeaseReport lease = report_lease(s.lease, shape.now);
            xml += std::string("<LeaseStatus>") + lease.status + "</LeaseStatus><LeaseState>" + lease.state +
                   "</LeaseState>";
            if (lease.duration != nullptr) xml += std::string("<LeaseDuration>") + lease.duration + "</LeaseDuration>";
        }
        xml += "<Quota>" + std::to_string(s.quota_gib) + "</Quota>";
        if (shape.tiers) {
            if (s.snapshot.empty()) {  // a snapshot has no tier of its own
                xml += xml_element("AccessTier", s.access_tier.empty() ? "TransactionOptimized" : s.access_tier);
                xml += xml_element("AccessTierChangeTime", time::format_rfc1123(s.access_tier_changed));
            }
            xml += "<DefaultEncryptionScope>$account-encryption-key</DefaultEncryptionScope>"
                   "<DenyEncryptionScopeOverride>false</DenyEncryptionScopeOverride>";
        }
        if (deleted) {
            const time::TimePoint at = deleted_share_time(s.deleted_version).value_or(shape.now);
            const auto days_gone = std::chrono::duration_cast<std::chrono::hours>(shape.now - at).count() / 24;
            xml += xml_element("DeletedTime", time::format_rfc1123(at));
            xml += "<RemainingRetentionDays>" + std::to_string(std::max<long long>(0, shape.retention_days - days_gone)) +
                   "</RemainingRetentionDays>";
        }
        xml += "</Properties>";
        if (shape.metadata) xml += metadata_xml(s.metadata);
        xml += "</Share>";
    }
    return xml + "</Shares>" + xml_element("NextMarker", page.next_marker) + "</EnumerationResults>";
}

std::string list_directory_xml(const std::string& endpoint, const std::string& share, const std::string& snapshot,
                               const std::string& directory_path, const ListOptions& o,
                               const DirectoryPage& page, bool extended) {
    std::string xml = "<?xml version=\"1.0\" encoding=\"utf-8\"?><EnumerationResults ServiceEndpoint=\"" +
                      text::markup_escape(endpoint) + "/\" ShareName=\"" + text::markup_escape(share) + "\"";
    if (!snapshot.empty()) xml += " ShareSnapshot=\"" + text::markup_escape(snapshot) + "\"";
    xml += " DirectoryPath=\"" + text::markup_escape(directory_path) + "\">" + paging_xml(o, false);
    if (extended) xml += "<DirectoryId>" + std::to_string(page.directory.id) + "</DirectoryId>";
    xml += "<Entries>";
    for (const ShareEntry& e : page.entries) {
        const char* tag = e.is_dir ? "Directory" : "File";
        xml += std::string("<") + tag + ">" + xml_element("Name", e.name);
        if (extended) xml += "<FileId>" + std::to_string(e.id) + "</FileId>";
        xml += "<Properties>";
        if (!e.is_dir) xml += "<Content-Length>" + std::to_string(e.size) + "</Content-Length>";
        if (extended) {
            xml += xml_element("CreationTime", time::format_iso8601(e.smb.creation_time));
            xml += xml_element("LastAccessTime", time::format_iso8601(e.smb.last_write_time));
            xml += xml_element("LastWriteTime", time::format_iso8601(e.smb.last_write_time));
            xml += xml_element("ChangeTime", time::format_iso8601(e.smb.change_time));
            xml += xml_element("Last-Modified", time::format_rfc1123(e.last_modified));
            xml += xml_element("Etag", e.etag);
        }
        xml += "</Properties>";
        if (extended) xml += xml_element("Attributes", e.smb.attributes) + xml_element("PermissionKey", permission_key_of(e));
        xml += std::string("</") + tag + ">";
    }
    return xml + "</Entries>" + xml_element("NextMarker", page.next_marker) + "</EnumerationResults>";
}

std::string ranges_xml(const std::vector<FileRanges::Listed>& ranges) {
    std::string xml = "<?xml version=\"1.0\" encoding=\"utf-8\"?><Ranges>";
    for (const FileRanges::Listed& r : ranges) {
        const char* tag = r.cleared ? "ClearRange" : "Range";
        xml += std::string("<") + tag + "><Start>" + std::to_string(r.first) + "</Start><End>" +
               std::to_string(r.last) + "</End></" + tag + ">";
    }
    return xml + "</Ranges>";
}

}  // namespace bai::storage
