// bai-blobfuse's configuration file, in blobfuse's (v1) format: one "key value" per line, '#'
// starting a comment. Keys: accountName, accountKey or sasToken, containerName, blobEndpoint (the
// emulator's Blob URL, http://HOST:PORT/ACCOUNT), authType (Key or SAS, optional), caCertFile
// (HTTPS only). And its command line, as blobfuse's: MOUNTPOINT --config-file=FILE
// [--tmp-path=DIR] [--container-name=NAME] [-o OPTIONS]... (the other blobfuse flags accepted).
// bai-sharefuse takes the same, with shareName, fileEndpoint and --share-name.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "fuse_mounts/blob/blob_fs.h"
#include "fuse_mounts/blob/blob_mount_options.h"
#include "fuse_mounts/blob/blob_rest_container.h"

namespace bai::mounts {

// What a remote mount shows: a blob container (bai-blobfuse) or a file share (bai-sharefuse, whose
// file names the share with shareName and the File endpoint with fileEndpoint instead).
enum class RemoteVolume { container, share };

// Applies the file's text to `settings`. Throws std::invalid_argument naming the line and key.
void parse_blobfuse_config(std::string_view text, BlobRestSettings& settings,
                           RemoteVolume volume = RemoteVolume::container);

struct BlobfuseCommand {
    std::string mountpoint;
    std::string config_file;
    std::string container;  // --container-name (--share-name): overrides the file's
    std::string tmp_path;
    std::string mount_options;  // what apply_blob_mount_options takes
};

// Throws std::invalid_argument naming the argument.
BlobfuseCommand parse_blobfuse_command(const std::vector<std::string>& args);

}  // namespace bai::mounts
