// The parts of the storage engine that the job engine reaches directly (no HTTP): file shares and
// blob containers, to mount them into nodes and to index what jobs wrote there.
#pragma once

#include <filesystem>
#include <functional>
#include <string>

#include "fake_storage/engine/blob_store.h"
#include "fake_storage/engine/content_files.h"
#include "fake_storage/engine/file_store.h"

namespace bai::engine {

// A file server's disk: the directory that stands for its exported path (mountSettings.mountPoint).
struct FileServerExport {
    std::filesystem::path directory;
    std::string mount_point;  // "/mnt/data"
};

// How a node's host that does not see this machine's mounts reaches a blob container: through the
// Blob REST API, with bai-blobfuse (host_blob_mounts.h). Unset (no program) on one machine.
struct RemoteBlobAccess {
    std::filesystem::path program;  // bai-blobfuse where every host finds it (the shared data directory)
    std::function<std::string()> endpoint;  // the Blob endpoint's URL as published (http://HOST:PORT)
    // A SAS query for the container ("" when the account is unknown).
    std::function<std::string(const std::string& account, const std::string& container, bool read_only)> sas;
};

struct StorageAccess {
    storage::FileStore& files;
    storage::BlobStore& blobs;
    storage::ContentFiles& content;
    // Where blob mounts stage the files being written (the store's own temporary directory).
    std::filesystem::path staging_dir;
    // The export of the file server with that resource id; throws std::runtime_error naming it
    // when there is no such file server. Set by the job engine.
    std::function<FileServerExport(const std::string& file_server_id)> file_server_export;
    RemoteBlobAccess remote_blobs;
};

}  // namespace bai::engine
