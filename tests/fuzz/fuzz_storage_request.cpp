// libFuzzer: the path-style URL parser and the share path rules.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fake_storage/engine/names.h"
#include "fake_storage/engine/storage_error.h"
#include "fake_storage/http/storage_request.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    httplib::Request http;
    http.method = "GET";
    http.target.assign(reinterpret_cast<const char*>(data), size);
    try {
        bai::storage::StorageRequest r = bai::storage::parse_storage_request(http);
        (void)r.param("comp");
        bai::storage::split_share_path(r.name);
        bai::storage::is_valid_blob_name(r.name);
        bai::storage::is_valid_container_name(r.container);
    } catch (const bai::storage::StorageError&) {
    }
    return 0;
}
