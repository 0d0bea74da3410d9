// libFuzzer: the path-style URL parser, the share path rules, share snapshot names, deleted shares'
// versions, blob version ids (`versionid`), and the lease headers (lease ids, actions, durations)
// read from the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "fake_storage/blob/blob_versions.h"
#include "fake_storage/engine/names.h"
#include "fake_storage/engine/share_snapshot_names.h"
#include "fake_storage/engine/storage_error.h"
#include "fake_storage/http/lease_headers.h"
#include "fake_storage/http/storage_request.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    httplib::Request http;
    http.method = "GET";
    http.target.assign(reinterpret_cast<const char*>(data), size);
    // The same bytes as lease headers: an action and a duration from their start, ids from all.
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    static const char* kActions[] = {"acquire", "renew", "change", "release", "break", "Acquire", "steal"};
    http.headers.emplace("x-ms-lease-action", kActions[size == 0 ? 0 : data[0] % std::size(kActions)]);
    const std::size_t after_action = size == 0 ? 0 : 1;  // substr past the end throws
    http.headers.emplace("x-ms-lease-duration", bytes.substr(after_action, 3));
    http.headers.emplace("x-ms-lease-break-period", bytes.substr(after_action, 2));
    http.headers.emplace("x-ms-lease-id", bytes);
    http.headers.emplace("x-ms-proposed-lease-id", bytes.substr(size / 2));
    // A lease id taken is a GUID in one of its four spellings.
    if (bai::storage::is_lease_id(bytes) && size != 32 && size != 36 && size != 38) std::abort();
    try {
        bai::storage::StorageRequest r = bai::storage::parse_storage_request(http);
        try {
            bai::storage::LeaseRequest lease = bai::storage::lease_request(r);
            if (lease.lease_id && !bai::storage::is_lease_id(*lease.lease_id)) std::abort();
        } catch (const bai::storage::StorageError&) {
        }
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
        // A deleted share's version taken (x-ms-deleted-share-version) names a time that writes
        // back as the same 16 hex digits, and its key splits back into share and version.
        if (auto deleted = bai::storage::deleted_share_time(bytes)) {
            const std::string version = bai::storage::deleted_share_version(*deleted);
            if (version.size() != 16 || bai::storage::deleted_share_time(version) != deleted) std::abort();
            if (r.container.find_first_of("/~") == std::string::npos &&
                bai::storage::split_deleted_share_key(bai::storage::deleted_share_key(r.container, version)) !=
                    std::make_pair(r.container, version)) {
                std::abort();
            }
        }
        // A version id taken is one the service writes, and reads back as itself; the store's
        // key for it is never a snapshot's or the blob's own.
        if (auto id = bai::storage::parse_version_id(bytes)) {
            if (id->size() != 28 || bai::storage::parse_version_id(*id) != id) std::abort();
        }
        try {
            const std::string target = bai::storage::blob_target(r);
            if (r.has_param("versionid") && (target.size() != 29 || target.front() != '@')) std::abort();
        } catch (const bai::storage::StorageError&) {
        }
    } catch (const bai::storage::StorageError&) {
    }
    return 0;
}
