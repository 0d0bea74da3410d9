// What the Blob and File services' list answers (List Containers, List Blobs, List Shares, List
// Directories and Files) write alike.
#pragma once

#include <string>

namespace bai::storage {

struct ListOptions;

// <Name>value</Name>, the value escaped; <Name /> when it is empty, as the services write it.
std::string xml_element(const char* name, const std::string& value);

// The request's Prefix, Marker, MaxResults (only when the request named it) and, where the
// listing takes one, Delimiter, as the listing echoes them before its entries.
std::string paging_xml(const ListOptions& o, bool with_delimiter);

}  // namespace bai::storage
