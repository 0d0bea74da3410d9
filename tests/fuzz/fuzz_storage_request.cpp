// libFuzzer: the path-style URL parser, the share path rules and share snapshot names.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "fake_storage/engine/names.h"
#include "fake_storage/engine/share_snapshot_names.h"
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
        // A snapshot's name reads back as itself, and its key splits back into share and name.
        if (auto value = r.param("sharesnapshot")) {
            if (auto name = bai::storage::parse_share_snapshot(*value)) {
                if (bai::storage::parse_share_snapshot(*name) != name) std::abort();
                auto key = bai::storage::share_snapshot_key(r.container, *name);
                if (r.container.find('/') == std::string::npos &&
                    bai::storage::split_share_snapshot_key(key) != std::make_pair(r.container, *name)) {
                    std::abort();
                }
            }
        }
    } catch (const bai::storage::StorageError&) {
    }
    return 0;
}
