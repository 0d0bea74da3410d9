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
    const size_t scheme = url.find("://");
    if (scheme == std::string::npos) return false;
    const size_t slash = url.find('/', scheme + 3);
    const std::string host = text::lower(url.substr(scheme + 3, slash == std::string::npos ? std::string::npos : slash - scheme - 3));
    if (host.ends_with(".blob.core.windows.net")) return true;
    if (!blobs_ || blob_port_ <= 0) return false;
    // host:port, an IPv6 address in brackets.
    const size_t colon = host.rfind(':');
    if (colon == std::string::npos || host.find(']', colon) != std::string::npos) return false;
    std::string name = host.substr(0, colon);
    if (name.size() >= 2 && name.front() == '[' && name.back() == ']') name = name.substr(1, name.size() - 2);
    return host.substr(colon + 1) == std::to_string(blob_port_) && http::is_loopback_host(name);
}

CopySource FileService::authorize_blob_source(const std::string& url, const StorageCall& call) {
    if (!blobs_) fail(404, "CannotVerifyCopySource", "The specified resource does not exist.");
    // The URL's own host stands for this server: names_blob_endpoint said it is the Blob endpoint.
    const size_t scheme = url.find("://");
    const size_t slash = url.find('/', scheme + 3);
    const std::string host = url.substr(scheme + 3, slash == std::string::npos ? std::string::npos : slash - scheme - 3);
    CopySource source = parse_copy_source(url, host, "x-ms-copy-source", ".blob.core.windows.net");
    // A SAS of its own (a container's stored policies included), the key of its account when that
    // key signed the request, or a public container: as Copy Blob reads its source.
    BlobStore& blobs = *blobs_;
    auto is_public = [&blobs](const std::string& account, const std::string& container) {
        try {
            return !blobs.get_container(account, container).public_access.empty();
        } catch (const StorageError&) {
            return false;
        }
    };
    auto policies = [&blobs](const std::string& account, const std::string& container,
                             const std::string& id) -> std::optional<StoredPolicy> {
        try {
            for (const SignedIdentifier& i : blobs.get_container(account, container).identifiers) {
                if (i.id == id) return StoredPolicy{i.start, i.expiry, i.permission};
            }
        } catch (const StorageError&) {
        }
        return std::nullopt;
    };
    authorize_copy_source(source, call, accounts_, is_public, true, policies, SasService::blob);
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
