// The Put Block List body: <BlockList><Latest|Committed|Uncommitted>id</...>...</BlockList>.
#pragma once

#include <string_view>
#include <vector>

#include "fake_storage/engine/blob_store.h"

namespace bai::storage {

// Throws StorageError 400 InvalidXmlDocument for anything that is not such a document.
std::vector<BlockRef> parse_block_list(std::string_view xml);

}  // namespace bai::storage
