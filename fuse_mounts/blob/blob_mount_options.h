// blobfuse's mount options (azureBlobFileSystems[].mountOptions, e.g. "-o attr_timeout=240
// -o entry_timeout=240 -o negative_timeout=120 -o allow_other --file-cache-timeout-in-seconds=120")
// applied to a blob mount. What blobfuse or libfuse would refuse is refused here too, so a job
// whose options would not have mounted in the cloud does not mount here either.
#pragma once

#include <string>

#include "fuse_mounts/blob/blob_fs.h"

namespace bai::mounts {

// Applies `text` to `options`: ro/rw, attr_timeout, entry_timeout, negative_timeout (seconds),
// kernel_cache. The other options of libfuse (-o allow_other, big_writes, max_read=N, ...) and
// blobfuse's own flags (--use-https=true, --tmp-path=..., ...) are accepted and change nothing
// here. Throws std::invalid_argument naming an unknown option or a bad value.
void apply_blob_mount_options(const std::string& text, BlobFsOptions& options);

}  // namespace bai::mounts
