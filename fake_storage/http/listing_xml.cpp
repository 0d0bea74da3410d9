#include "fake_storage/http/listing_xml.h"

#include "common/text/markup_escape.h"
#include "fake_storage/engine/blob_store.h"

namespace bai::storage {

std::string xml_element(const char* name, const std::string& value) {
    if (value.empty()) return std::string("<") + name + " />";
    return std::string("<") + name + ">" + text::markup_escape(value) + "</" + name + ">";
}

std::string paging_xml(const ListOptions& o, bool with_delimiter) {
    std::string xml;
    if (!o.prefix.empty()) xml += xml_element("Prefix", o.prefix);
    if (!o.marker.empty()) xml += xml_element("Marker", o.marker);
    if (o.max_results_asked) xml += "<MaxResults>" + std::to_string(o.max_results) + "</MaxResults>";
    if (with_delimiter && !o.delimiter.empty()) xml += xml_element("Delimiter", o.delimiter);
    return xml;
}

}  // namespace bai::storage
