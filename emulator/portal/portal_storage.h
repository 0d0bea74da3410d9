// The portal's storage browser: an account's blob containers and file shares, a container's
// blobs and a share's directories, one page at a time (200 entries, continued with the store's
// marker), each file with a download link to the storage endpoint signed for reading (a SAS
// valid for an hour: the browser fetches it from the Blob or File endpoint itself); and its
// changes: upload, delete, metadata, with their properties.
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
    storage::ContentFiles& content;  // where an upload's bytes are received
    endpoints::Endpoints endpoints;
    std::string token;  // the page's (portal_guard.h): what every change needs
};

// GET /portal/api/storage/volumes?account=, /portal/api/storage/blobs?account=&container=&prefix=&marker=,
// /portal/api/storage/files?account=&share=&path=&marker=.
void add_storage_routes(http::Routes& routes, const StorageSources& sources);

// The browser's changes (portal_storage_edit.cpp), each with the page's token:
//   POST /portal/api/storage/upload?account=&container=&name=  (or &share=&path=): the body is
//        the file (up to the ARM endpoint's 64 MiB), its Content-Type the blob's or file's;
//   POST /portal/api/storage/delete?...: a blob with its snapshots, a file, or an empty directory;
//   POST /portal/api/storage/metadata?... {"metadata": {NAME: VALUE}}: replaces the metadata;
//   GET  /portal/api/storage/properties?...: size, ETag, times, content settings, type, tier,
//        lease state, metadata.
void add_storage_change_routes(http::Routes& routes, const StorageSources& sources);

}  // namespace bai::portal
