// libFuzzer: the Set Blob and Set File Service Properties XML parsers, the documents they write
// back, and the CORS origin matcher on the rules they read.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fake_storage/engine/service_settings.h"
#include "fake_storage/engine/storage_error.h"
#include "fake_storage/http/cors.h"
#include "fake_storage/http/service_properties_xml.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    try {
        nlohmann::json parsed = bai::storage::parse_blob_service_properties(input);
        nlohmann::json merged = bai::storage::merge_service_properties(bai::storage::default_blob_service_properties(), parsed);
        std::string xml = bai::storage::blob_service_properties_xml(merged);
        // What it writes, it reads back the same.
        if (bai::storage::parse_blob_service_properties(xml) != merged) __builtin_trap();
        for (const bai::storage::CorsRule& rule : bai::storage::cors_rules_of(merged)) {
            (void)bai::storage::cors_origin_allowed(std::string(input.substr(0, 64)), rule.allowed_origins);
        }
    } catch (const bai::storage::StorageError&) {
    }
    try {
        nlohmann::json parsed = bai::storage::parse_file_service_properties(input);
        nlohmann::json merged = bai::storage::merge_service_properties(bai::storage::default_file_service_properties(), parsed);
        std::string xml = bai::storage::file_service_properties_xml(merged);
        if (bai::storage::parse_file_service_properties(xml) != merged) __builtin_trap();
        (void)bai::storage::file_service_properties_xml(merged, {false, false});
    } catch (const bai::storage::StorageError&) {
    }
    return 0;
}
