// The main of bai-blobfuse and bai-sharefuse: mounts a blob container or a file share of the
// emulator through its Blob or File REST API, on a host that does not share the emulator's process
// or disk (a Slurm host), as blobfuse mounts a container of Azure Storage:
// `PROGRAM MOUNTPOINT --config-file=FILE [--tmp-path=DIR] [-o OPTIONS]` (blobfuse_config.h). It
// serves in the foreground until it gets SIGTERM, SIGINT or SIGHUP (then it commits what is staged
// and unmounts) or the mount is unmounted (fusermount -u). Exit status: 0 after an unmount, 1 when
// it cannot mount (the service's words), 2 for a bad command line or configuration file.
#pragma once

#include "fuse_mounts/remote/blobfuse_config.h"

namespace bai::mounts {

int run_remote_mount(int argc, char** argv, RemoteVolume volume);

}  // namespace bai::mounts
