#include "fuse_mounts/share/share_rest_answers.h"

#include <cstdlib>
#include <pugixml.hpp>

#include "common/time/timestamps.h"
#include "fake_storage/engine/storage_error.h"
#include "fuse_mounts/blob/blob_rest_answers.h"

namespace bai::mounts {

storage::BlobInfo share_file_info(const std::string& share, const std::string& path, const httplib::Response& r) {
    storage::BlobInfo b = info_of(share, path, r);
    if (auto written = time::parse_iso8601(r.get_header_value("x-ms-file-last-write-time"))) b.last_modified = *written;
    if (auto created = time::parse_iso8601(r.get_header_value("x-ms-file-creation-time"))) b.created = *created;
    return b;
}

storage::BlobListPage parse_list_directory(const std::string& xml, const std::string& share, const std::string& prefix) {
    pugi::xml_document doc;
    if (!doc.load_buffer(xml.data(), xml.size())) {
        throw storage::StorageError(502, "InvalidXml", "List Directories and Files answered no XML");
    }
    const pugi::xml_node root = doc.child("EnumerationResults");
    storage::BlobListPage page;
    for (const pugi::xml_node item : root.child("Entries").children()) {
        const std::string kind = item.name();
        const std::string name = item.child_value("Name");
        if ((kind != "File" && kind != "Directory") || name.empty() || name.find('/') != std::string::npos) continue;
        const pugi::xml_node p = item.child("Properties");
        storage::BlobListEntry entry;
        storage::BlobInfo& b = entry.blob;
        b.container = share;
        b.name = prefix + name;
        b.etag = p.child_value("Etag");
        b.last_modified = time::parse_iso8601(p.child_value("LastWriteTime"))
                              .value_or(time::parse_rfc1123(p.child_value("Last-Modified")).value_or(time::TimePoint{}));
        b.created = time::parse_iso8601(p.child_value("CreationTime")).value_or(b.last_modified);
        if (kind == "Directory") {
            entry.is_prefix = true;
            entry.prefix = prefix + name + "/";
        } else {
            b.size = std::strtoull(p.child_value("Content-Length"), nullptr, 10);
        }
        page.entries.push_back(std::move(entry));
    }
    page.next_marker = root.child_value("NextMarker");
    return page;
}

}  // namespace bai::mounts
