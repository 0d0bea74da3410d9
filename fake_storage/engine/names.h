// The cloud's naming rules for containers, blobs, shares, directories and files.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/text/utf8.h"

namespace bai::storage {

// 3-63 characters: lower-case letters, digits and single dashes, starting and ending with a
// letter or digit; or one of the reserved $root, $logs, $web.
bool is_valid_container_name(std::string_view name);
// Shares follow the container rule (without the reserved names).
bool is_valid_share_name(std::string_view name);
// 1-1024 characters of valid UTF-8; no NUL.
bool is_valid_blob_name(std::string_view name);

// Splits a share path ("dir/sub/file") into its components, checking each against the Azure
// Files rules: 1-255 characters, none of " \ : | < > * ? or control characters, not "." or
// "..", and the whole path at most 2048 characters. An empty path (the share root) has no
// components. Throws StorageError 400 with the code the service uses.
std::vector<std::string> split_share_path(std::string_view path);

using text::is_valid_utf8;

}  // namespace bai::storage
