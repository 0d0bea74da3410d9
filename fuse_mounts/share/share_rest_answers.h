// What the File REST API answers, read for the share filesystem over REST (share_rest_container.h):
// a file's or directory's properties from its headers, a page of List Directories and Files. Answers
// come from the network: whatever they hold, these read what they can and never crash.
#pragma once

#include <httplib.h>

#include <string>

#include "fake_storage/engine/blob_store.h"

namespace bai::mounts {

// A file's properties (Get File Properties, Get File) as the blob filesystem reads an entry: its
// time is the file's last write time (what an SMB mount shows), else its Last-Modified.
storage::BlobInfo share_file_info(const std::string& share, const std::string& path, const httplib::Response& r);
// A page of List Directories and Files of the directory `prefix` names ("" or "DIR/"): files as
// entries named prefix + name, directories as prefixes prefix + name + "/" (with their times).
// Throws storage::StorageError 502 InvalidXml when the body is no XML.
storage::BlobListPage parse_list_directory(const std::string& xml, const std::string& share, const std::string& prefix);

}  // namespace bai::mounts
