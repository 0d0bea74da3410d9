// libFuzzer: blobfuse's mountOptions parser (a job's azureBlobFileSystems[].mountOptions).
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "fuse_mounts/blob/blob_mount_options.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    bai::mounts::BlobFsOptions options;
    try {
        bai::mounts::apply_blob_mount_options(std::string(reinterpret_cast<const char*>(data), size), options);
        for (double t : {options.attr_timeout, options.entry_timeout, options.negative_timeout}) {
            if (!(t >= 0 && t <= 86400.0 * 365)) __builtin_trap();
        }
    } catch (const std::invalid_argument&) {
    }
    return 0;
}
