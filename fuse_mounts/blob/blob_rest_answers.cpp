#include "fuse_mounts/blob/blob_rest_answers.h"

#include <strings.h>

#include <cstdlib>
#include <sstream>
#include <pugixml.hpp>

#include "common/text/ascii.h"
#include "common/text/percent_encoding.h"
#include "common/time/timestamps.h"
#include "fake_storage/engine/storage_error.h"

namespace bai::mounts {

time::TimePoint time_of(const httplib::Response& r, const char* name) {
    return time::parse_rfc1123(r.get_header_value(name)).value_or(time::TimePoint{});
}

storage::BlobInfo info_of(const std::string& container, const std::string& name, const httplib::Response& r) {
    storage::BlobInfo b;
    b.container = container;
    b.name = name;
    b.size = std::strtoull(r.get_header_value("Content-Length").c_str(), nullptr, 10);
    b.etag = r.get_header_value("ETag");
    b.last_modified = time_of(r, "Last-Modified");
    b.created = time_of(r, "x-ms-creation-time");
    if (b.created == time::TimePoint{}) b.created = b.last_modified;
    b.content.content_type = r.get_header_value("Content-Type");
    b.content.content_encoding = r.get_header_value("Content-Encoding");
    b.content.content_language = r.get_header_value("Content-Language");
    b.content.content_disposition = r.get_header_value("Content-Disposition");
    b.content.cache_control = r.get_header_value("Cache-Control");
    for (const auto& [header, value] : r.headers) {
        if (header.size() > 9 && strncasecmp(header.c_str(), "x-ms-meta-", 10) == 0) b.metadata[header.substr(10)] = value;
    }
    return b;
}

storage::BlobListPage parse_list_blobs(const std::string& xml, const std::string& container) {
    pugi::xml_document doc;
    if (!doc.load_buffer(xml.data(), xml.size())) throw storage::StorageError(502, "InvalidXml", "List Blobs answered no XML");
    const pugi::xml_node root = doc.child("EnumerationResults");
    auto decoded = [](const pugi::xml_node& name) {
        const std::string text = name.child_value();
        if (!name.attribute("Encoded").as_bool()) return text;
        return text::percent_decode(text, false).value_or(text);
    };
    storage::BlobListPage page;
    for (const pugi::xml_node item : root.child("Blobs").children()) {
        storage::BlobListEntry entry;
        if (std::string(item.name()) == "BlobPrefix") {
            entry.is_prefix = true;
            entry.prefix = decoded(item.child("Name"));
        } else if (std::string(item.name()) == "Blob") {
            storage::BlobInfo& b = entry.blob;
            b.container = container;
            b.name = decoded(item.child("Name"));
            const pugi::xml_node p = item.child("Properties");
            b.size = std::strtoull(p.child_value("Content-Length"), nullptr, 10);
            b.etag = p.child_value("Etag");
            b.last_modified = time::parse_rfc1123(p.child_value("Last-Modified")).value_or(time::TimePoint{});
            b.created = time::parse_rfc1123(p.child_value("Creation-Time")).value_or(b.last_modified);
            b.content.content_type = p.child_value("Content-Type");
            for (const pugi::xml_node m : item.child("Metadata").children()) b.metadata[m.name()] = m.child_value();
        } else {
            continue;
        }
        page.entries.push_back(std::move(entry));
    }
    page.next_marker = root.child_value("NextMarker");
    return page;
}

std::string error_message(const httplib::Response& r) {
    pugi::xml_document doc;
    if (!r.body.empty() && doc.load_buffer(r.body.data(), r.body.size())) {
        // Its first line with words ("RequestId:..." and "Time:..." follow on lines of their own).
        std::istringstream lines(doc.child("Error").child_value("Message"));
        for (std::string line; std::getline(lines, line);) {
            const std::string_view words = text::trim(line);
            if (!words.empty() && words != "\r") return std::string(words.substr(0, words.find('\r')));
        }
    }
    // A HEAD's error has no body: its code is in the header alone.
    const std::string code = r.get_header_value("x-ms-error-code");
    return (code.empty() ? "" : code + " ") + "(HTTP " + std::to_string(r.status) + ")";
}

}  // namespace bai::mounts
