// bai-sharefuse: a file share of the emulator mounted through the File REST API (remote_mount_main.h).
#include "fuse_mounts/remote/remote_mount_main.h"

int main(int argc, char** argv) { return bai::mounts::run_remote_mount(argc, argv, bai::mounts::RemoteVolume::share); }
