// What blobs, files, containers and shares carry besides their bytes.
#pragma once

#include <map>
#include <string>

#include "common/time/timestamps.h"

namespace bai::storage {

// User metadata (x-ms-meta-NAME). Names keep their case, compare case-insensitively.
struct CaseInsensitiveLess {
    bool operator()(const std::string& a, const std::string& b) const;
};
using Metadata = std::map<std::string, std::string, CaseInsensitiveLess>;

// The standard HTTP content headers stored with a blob or a file.
struct ContentSettings {
    std::string content_type;
    std::string content_encoding;
    std::string content_language;
    std::string content_md5;  // base64 of the 16-byte digest, or empty
    std::string content_disposition;
    std::string cache_control;
};

// How metadata and content settings are stored in SQLite. Metadata: JSON pairs. Content
// settings: the six fields joined by U+001F (a control character that HTTP header values cannot
// carry), decoded on every read of a blob or file, hence not JSON; older JSON rows still decode.
std::string metadata_to_json(const Metadata& metadata);
Metadata metadata_from_json(const std::string& json);
std::string encode_content_settings(const ContentSettings& content);
ContentSettings decode_content_settings(const std::string& stored);

// A new strong ETag, quoted, unique within the process and increasing: "0x8DE...".
std::string new_etag();

// A metadata name must be a C# identifier (letters, digits, underscore; not starting with a
// digit), as the service requires.
bool is_valid_metadata_name(const std::string& name);

}  // namespace bai::storage
