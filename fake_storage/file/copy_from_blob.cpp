// Copy File from a blob: x-ms-copy-source names a blob of this emulator (its Blob endpoint's URL,
// or the cloud's https://ACCOUNT.blob.core.windows.net/...), read as Copy Blob reads a source.
#include <strings.h>

#include "common/http/loopback.h"
#include "common/text/ascii.h"
#include "fake_storage/blob/copy_source.h"
#include "fake_storage/engine/storage_error.h"
#include "fake_storage/file/file_service.h"

namespace bai::storage {

bool FileService::names_blob_endpoint(const std::string& url) const {
    const std::string host = text::lower(url_host(url));
    if (host.ends_with(".blob.core.windows.net")) return true;
    if (!blobs_ || blob_port_ <= 0) return false;
    const auto [name, port] = host_and_port(host);
    return port == std::to_string(blob_port_) && http::is_loopback_host(name);
}

CopySource FileService::authorize_blob_source(const std::string& url, const StorageCall& call) {
    if (!blobs_) fail(404, "CannotVerifyCopySource", "The specified resource does not exist.");
    // The URL's own host stands for this server: names_blob_endpoint said it is the Blob endpoint.
    CopySource source = parse_copy_source(url, url_host(url), "x-ms-copy-source", ".blob.core.windows.net");
    // A SAS of its own (a container's stored policies included), the key of its account when that
    // key signed the request, or a public container: as Copy Blob reads its source.
    BlobStore& blobs = *blobs_;
    authorize_copy_source(
        source, call, accounts_,
        [&blobs](const std::string& account, const std::string& container) {
            return blob_container_is_public(blobs, account, container);
        },
        true,
        [&blobs](const std::string& account, const std::string& container, const std::string& id) {
            return blob_container_policy(blobs, account, container, id);
        },
        SasService::blob);
    return source;
}

OpenBlob FileService::open_blob_source(const CopySource& source) {
    OpenBlob blob = blobs_->open_copy_source(source.account, source.container, source.name, source.snapshot);
    if (strcasecmp(blob.info.tier.c_str(), "Archive") == 0) {
        fail(409, "BlobArchived", "This operation is not permitted on an archived blob.");
    }
    return blob;
}

}  // namespace bai::storage
