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

// How a node's host that does not see this machine's mounts reaches a blob container (or, when it
// does not see the store's directories either, a file share): through the Blob (File) REST API,
// with bai-blobfuse (bai-sharefuse) (host_volumes.h). Unset (no program) on one machine.
struct RemoteVolumeAccess {
    std::filesystem::path program;  // the program where every host finds it (the shared data directory)
    std::function<std::string()> endpoint;  // the endpoint's URL as published (http://HOST:PORT)
    // A SAS query for the container or share ("" when the account is unknown).
    std::function<std::string(const std::string& account, const std::string& volume, bool read_only)> sas;
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
    RemoteVolumeAccess remote_blobs;
    RemoteVolumeAccess remote_shares;
};

}  // namespace bai::engine
