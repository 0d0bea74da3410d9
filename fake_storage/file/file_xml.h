// The XML documents of the File service: share listings, directory listings, range lists.
#pragma once

#include <string>

#include "fake_storage/engine/file_store.h"

namespace bai::storage {

std::string list_shares_xml(const std::string& service_endpoint, const ListOptions& options,
                            const SharePage& page, bool include_metadata);
std::string list_directory_xml(const std::string& service_endpoint, const std::string& share,
                               const std::string& directory_path, const ListOptions& options,
                               const DirectoryPage& page);
std::string ranges_xml(const std::vector<std::pair<std::uint64_t, std::uint64_t>>& ranges);

// The fixed permission key every file and directory reports (permissions are not modelled).
inline constexpr const char* kPermissionKey = "4066528134148476695*1";

}  // namespace bai::storage
