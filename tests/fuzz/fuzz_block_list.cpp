// libFuzzer: the Put Block List XML parser.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fake_storage/engine/storage_error.h"
#include "fake_storage/http/block_list_xml.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        auto blocks = bai::storage::parse_block_list(
            std::string_view(reinterpret_cast<const char*>(data), size));
        (void)blocks.size();
    } catch (const bai::storage::StorageError&) {
    }
    return 0;
}
