// The StorageServiceProperties document of Get/Set Blob and File Service Properties, read into
// and written from the JSON model that ServiceSettings keeps: one key per top-level element
// (Blob: Logging, HourMetrics, MinuteMetrics, Cors, DefaultServiceVersion, DeleteRetentionPolicy,
// StaticWebsite; File: HourMetrics, MinuteMetrics, Cors, ShareDeleteRetentionPolicy,
// ProtocolSettings), each an object of the element's children (RetentionPolicy and SMB nested;
// Cors an array of rules).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace bai::storage {

// A new account's Blob service properties, as the service reports them before any are set.
nlohmann::json default_blob_service_properties();

// Reads and checks a Set Blob Service Properties body: 400 InvalidXmlDocument for XML that does
// not parse or lacks a required element, 400 InvalidXmlNodeValue (naming the element and its
// value) for a value out of range. Only the elements sent are in the result.
nlohmann::json parse_blob_service_properties(std::string_view xml);

// `stored` with the top-level elements of `update` replacing its own (the service keeps what a
// Set does not name; a Cors element, even empty, replaces every rule).
nlohmann::json merge_service_properties(nlohmann::json stored, const nlohmann::json& update);

std::string blob_service_properties_xml(const nlohmann::json& properties);

// A new account's File service properties, as the service reports them before any are set.
nlohmann::json default_file_service_properties();
// Reads and checks a Set File Service Properties body, as parse_blob_service_properties does
// (elements of the Blob service's alone are ignored).
nlohmann::json parse_file_service_properties(std::string_view xml);
// What Get File Service Properties answers depends on x-ms-version: ShareDeleteRetentionPolicy
// came with 2019-12-12 (and is said once set), ProtocolSettings with 2020-02-10.
struct FileServiceShape {
    bool share_delete_retention = true;
    bool protocol_settings = true;
};
std::string file_service_properties_xml(const nlohmann::json& properties, const FileServiceShape& shape = {});

}  // namespace bai::storage
