// The portal's storage browser: an account's blob containers and file shares, a container's
// blobs and a share's directories, one page at a time (200 entries, continued with the store's
// marker), each file with a download link to the storage endpoint signed for reading (a SAS
// valid for an hour: the browser fetches it from the Blob or File endpoint itself).
#pragma once

#include "common/endpoints/endpoints_file.h"
#include "common/http/routes.h"
#include "fake_storage/accounts/account_registry.h"
#include "fake_storage/engine/blob_store.h"
#include "fake_storage/engine/file_store.h"

namespace bai::portal {

struct StorageSources {
    const storage::AccountRegistry& accounts;
    storage::BlobStore& blobs;
    storage::FileStore& files;
    endpoints::Endpoints endpoints;
};

// GET /portal/api/storage/volumes?account=, /portal/api/storage/blobs?account=&container=&prefix=&marker=,
// /portal/api/storage/files?account=&share=&path=&marker=.
void add_storage_routes(http::Routes& routes, const StorageSources& sources);

}  // namespace bai::portal
